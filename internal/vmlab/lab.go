package vmlab

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// E1000PCI is the PCI address of the e1000 NIC in the guest (Machine.NIC).
// The lab pins every PCI device to a slot: e1000 00:03.0, qemu-xhci
// 00:04.0, usb-ehci 00:05.0, virtio-9p 00:06.0.
const E1000PCI = "0000:00:03.0"

// Guest PCI addresses of the USB controllers (Machine.USB).
const (
	XHCIPCI = "0000:00:04.0"
	EHCIPCI = "0000:00:05.0"
)

// InVM reports whether the code runs inside a lab guest (IOTAP_IN_VM=1,
// which the guest's init sets for everything it runs).
func InVM() bool { return os.Getenv("IOTAP_IN_VM") == "1" }

// Defaults of a Machine.
const (
	DefaultMemoryMB   = 1024
	DefaultTCGTimeout = 5 * time.Minute
	DefaultKVMTimeout = 2 * time.Minute
)

// Run boots m under QEMU, runs m.Script in the guest and returns what the
// run left behind. It skips t under -short and when QEMU, the lab kernel
// or a static busybox is missing, saying how to get them. It fails t when
// the guest breaks: QEMU fails, the kernel panics, the run exceeds its
// timeout, or the guest powers off without recording the script's exit
// status. A non-zero Result.ExitCode is left to the caller to judge.
func Run(t testing.TB, m Machine) *Result {
	t.Helper()
	res, err := run(t, m)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// run is Run returning the guest's failure as an error.
func run(t testing.TB, m Machine) (*Result, error) {
	t.Helper()
	qemu, kernel, busybox := requirements(t, m)
	if err := checkGuestPaths(m); err != nil {
		t.Fatal(err)
	}
	bins := map[string]string{"/bin/iotap": iotapBinary(t)}
	for g, h := range m.Binaries {
		bins[g] = h
	}
	work := t.TempDir()
	initrd, err := buildInitramfs(initramfsSpec{busybox: busybox, binaries: bins, files: m.Files, script: m.Script, usb: m.USB})
	if err != nil {
		return nil, err
	}
	initrdPath := filepath.Join(work, "initrd.gz")
	if err := os.WriteFile(initrdPath, initrd, 0o600); err != nil {
		return nil, err
	}
	if m.USB {
		for _, d := range []string{"d0", "d1"} {
			if err := writeDisk(filepath.Join(work, d+".img"), d); err != nil {
				return nil, err
			}
		}
	}
	accel, fallback := chooseAccel()
	res, err := boot(t, m, qemu, kernel, initrdPath, work, accel, fallback)
	if err != nil && fallback && errors.Is(err, errKVMFailed) {
		t.Logf("vmlab: KVM failed, falling back to TCG: %v", err)
		kvmBroken.Store(true)
		res, err = boot(t, m, qemu, kernel, initrdPath, work, "tcg", false)
	}
	return res, err
}

// requirements skips t unless everything a lab run needs is present.
func requirements(t testing.TB, m Machine) (qemu, kernel, busybox string) {
	t.Helper()
	if testing.Short() {
		t.Skip("vmlab: lab test skipped under -short (it boots a QEMU guest)")
	}
	qemu, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		t.Skip("vmlab: qemu-system-x86_64 not found: apt-get install qemu-system-x86")
	}
	kernel = m.Kernel
	if kernel == "" {
		kernel = os.Getenv("IOTAP_VM_KERNEL")
	}
	if kernel == "" {
		kernel = filepath.Join(filepath.Dir(moduleRoot(t)), "shared", "vm", "bzImage")
	}
	if _, err := os.Stat(kernel); err != nil {
		t.Skipf("vmlab: lab kernel %s not found: set IOTAP_VM_KERNEL to a bzImage, or build one with scripts/lab-kernel.sh %s", kernel, kernel)
	}
	busybox = os.Getenv("IOTAP_VM_BUSYBOX")
	if busybox == "" {
		busybox = "/bin/busybox"
	}
	if err := checkStatic(busybox); err != nil {
		t.Skipf("vmlab: %v: apt-get install busybox-static (or set IOTAP_VM_BUSYBOX to a static busybox)", err)
	}
	return qemu, kernel, busybox
}

// checkGuestPaths refuses files placed where the guest's init mounts
// something over them.
func checkGuestPaths(m Machine) error {
	var paths []string
	for p := range m.Files {
		paths = append(paths, p)
	}
	for p := range m.Binaries {
		paths = append(paths, p)
	}
	for _, p := range paths {
		clean := path.Clean("/" + p)
		for _, mnt := range []string{"/tmp", "/out", "/proc", "/sys", "/dev"} {
			if clean == mnt || strings.HasPrefix(clean, mnt+"/") {
				return fmt.Errorf("vmlab: cannot put %s into the guest: init mounts a file system on %s", p, mnt)
			}
		}
	}
	return nil
}

// checkStatic returns an error unless path is a statically linked ELF
// executable (no program interpreter).
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("no static busybox at %s (%v)", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked", path)
		}
	}
	return nil
}

var errKVMFailed = errors.New("kvm failed")

// boot runs one QEMU process to completion.
// With probe set, a KVM guest that has not started its script within
// kvmProbeTime is taken for a broken KVM (errKVMFailed).
func boot(t testing.TB, m Machine, qemu, kernel, initrd, work, accel string, probe bool) (*Result, error) {
	t.Helper()
	out := filepath.Join(work, "out")
	os.RemoveAll(out)
	if err := os.MkdirAll(filepath.Join(out, ".vmlab"), 0o777); err != nil {
		return nil, err
	}
	sockDir, err := os.MkdirTemp("", "vmlab")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(sockDir)
	qmpSock := filepath.Join(sockDir, "qmp.sock")

	args, err := qemuArgs(m, kernel, initrd, work, out, qmpSock, accel)
	if err != nil {
		return nil, err
	}
	timeout := m.Timeout
	if timeout == 0 {
		timeout = DefaultTCGTimeout
		if accel == "kvm" {
			timeout = DefaultKVMTimeout
		}
	}
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if dl, ok := d.Deadline(); ok && time.Until(dl)-10*time.Second < timeout {
			timeout = time.Until(dl) - 10*time.Second
		}
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("vmlab: the test's deadline leaves no time to boot a guest (go test -timeout)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ctx, cancelCause := context.WithCancelCause(ctx)
	defer cancelCause(nil)

	consoleFile, err := os.Create(filepath.Join(work, "console.log"))
	if err != nil {
		return nil, err
	}
	defer consoleFile.Close()
	con := &consoleWriter{start: time.Now(), marker: []byte("vmlab: script start")}
	var stdout io.Writer = io.MultiWriter(consoleFile, con)
	if os.Getenv("IOTAP_VM_VERBOSE") == "1" {
		stdout = io.MultiWriter(stdout, os.Stderr)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, qemu, args...)
	cmd.Stdout = stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	// QEMU dies with the test process (a go test timeout, a crash) rather
	// than running on as an orphan on a shared machine.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	t.Logf("vmlab: %s %s", qemu, strings.Join(args, " "))
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("vmlab: start qemu: %w", err)
	}

	done := make(chan struct{})
	if accel == "kvm" && probe {
		go func() {
			select {
			case <-done:
			case <-time.After(kvmProbeTime):
				if !con.marked() {
					cancelCause(fmt.Errorf("%w: the guest did not start its script within %v", errKVMFailed, kvmProbeTime))
				}
			}
		}()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		monitorLoop(t, qmpSock, filepath.Join(out, ".vmlab"), done)
	}()
	waitErr := cmd.Wait()
	close(done)
	wg.Wait()
	elapsed := time.Since(start)

	console := con.String()
	res := &Result{Out: out, Console: console, Accel: accel, Elapsed: elapsed, Boot: con.markAt}
	if cause := context.Cause(ctx); errors.Is(cause, errKVMFailed) {
		return nil, cause
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("vmlab: guest did not finish within %v (accel %s); QEMU killed\nconsole tail:\n%s", timeout, accel, tail(console, 60))
	}
	if accel == "kvm" && (strings.Contains(stderr.String(), "KVM internal error") || waitErr != nil) {
		return nil, fmt.Errorf("%w: %v: %s", errKVMFailed, waitErr, tail(stderr.String(), 10))
	}
	if waitErr != nil {
		return nil, fmt.Errorf("vmlab: qemu failed: %v\n%s\nconsole tail:\n%s", waitErr, stderr.String(), tail(console, 60))
	}
	b, err := os.ReadFile(filepath.Join(out, ".exit"))
	if err != nil {
		if accel == "kvm" {
			return nil, fmt.Errorf("%w: guest left no exit status", errKVMFailed)
		}
		return nil, fmt.Errorf("vmlab: the guest powered off without finishing its script (kernel panic or init failure?)\n%s\nconsole tail:\n%s", stderr.String(), tail(console, 60))
	}
	res.ExitCode, err = strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("vmlab: bad exit status %q in /out/.exit", b)
	}
	t.Logf("vmlab: accel %s, script started after %v, exit %d after %v", accel, res.Boot.Round(time.Millisecond), res.ExitCode, elapsed.Round(time.Millisecond))
	if w := kernelComplaints(console); w != "" {
		t.Logf("vmlab: the guest kernel complained:\n%s", w)
	}
	return res, nil
}

// monitorLoop connects to QEMU's QMP socket and serves the guest's
// lab_monitor requests until done is closed.
func monitorLoop(t testing.TB, sock, reqDir string, done <-chan struct{}) {
	var q *qmp
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			if q != nil {
				q.close()
			}
			return
		case <-tick.C:
		}
		if q == nil {
			var err error
			if q, err = dialQMP(sock, 0); err != nil {
				q = nil
				continue
			}
		}
		lines, err := serveMonitorRequests(q, reqDir)
		for _, l := range lines {
			t.Logf("vmlab: %s", l)
		}
		if err != nil {
			t.Logf("vmlab: monitor: %v", err)
		}
	}
}

// qemuArgs is the QEMU command line of m.
func qemuArgs(m Machine, kernel, initrd, work, out, qmpSock, accel string) ([]string, error) {
	mem := m.MemoryMB
	if mem == 0 {
		mem = DefaultMemoryMB
	}
	cpus := m.CPUs
	if cpus == 0 {
		cpus = 1
	}
	cpu := "max"
	if accel == "kvm" {
		cpu = "host"
	}
	args := []string{
		"-nodefaults", "-no-user-config", "-machine", "pc",
		"-accel", accel, "-cpu", cpu,
		"-m", strconv.Itoa(mem), "-smp", strconv.Itoa(cpus),
		"-display", "none", "-serial", "stdio", "-no-reboot",
		"-kernel", kernel, "-initrd", initrd,
		"-append", strings.TrimSpace("console=ttyS0 quiet panic=-1 oops=panic usb-storage.delay_use=0 " + m.KernelArgs),
		"-qmp", "unix:" + qmpSock + ",server=on,wait=off",
		"-fsdev", "local,id=out,path=" + out + ",security_model=none",
		"-device", "virtio-9p-pci,fsdev=out,mount_tag=out,addr=06.0",
	}
	if m.NIC {
		p1, p2, err := freeUDPPorts()
		if err != nil {
			return nil, err
		}
		args = append(args,
			"-netdev", fmt.Sprintf("socket,id=n0,udp=127.0.0.1:%d,localaddr=127.0.0.1:%d", p1, p2),
			"-device", "e1000,netdev=n0,id=nic0,addr=03.0,mac=52:54:00:12:34:56")
	}
	if m.USB {
		args = append(args,
			"-device", "qemu-xhci,id=xhci,addr=04.0",
			"-drive", "if=none,id=d0,format=raw,file="+filepath.Join(work, "d0.img"),
			"-device", "usb-storage,id=stor0,bus=xhci.0,drive=d0",
			"-device", "usb-kbd,id=kbd0,bus=xhci.0",
			"-device", "usb-tablet,id=tablet0,bus=xhci.0",
			"-device", "usb-ehci,id=ehci,addr=05.0",
			"-drive", "if=none,id=d1,format=raw,file="+filepath.Join(work, "d1.img"),
			"-device", "usb-storage,id=stor1,bus=ehci.0,drive=d1",
		)
	}
	return append(args, m.ExtraQEMUArgs...), nil
}

// freeUDPPorts returns two UDP ports on 127.0.0.1 that were free a moment
// ago: the e1000's peer port and its own.
func freeUDPPorts() (int, int, error) {
	var ports [2]int
	var conns []net.PacketConn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range ports {
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			return 0, 0, fmt.Errorf("vmlab: pick a UDP port: %w", err)
		}
		conns = append(conns, c)
		ports[i] = c.LocalAddr().(*net.UDPAddr).Port
	}
	return ports[0], ports[1], nil
}

// consoleWriter keeps the console text and notes when the marker first
// appears.
type consoleWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	start  time.Time
	marker []byte
	markAt time.Duration
}

func (c *consoleWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if c.markAt == 0 && bytes.Contains(c.buf.Bytes(), c.marker) {
		c.markAt = time.Since(c.start)
	}
	return len(p), nil
}

func (c *consoleWriter) marked() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.markAt != 0
}

func (c *consoleWriter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.ReplaceAll(c.buf.String(), "\r\n", "\n")
}

// kernelComplaints returns the console lines in which the guest kernel
// reports a warning, a bug or a hung task (at most 20), or "".
func kernelComplaints(console string) string {
	var out []string
	for _, l := range strings.Split(console, "\n") {
		if strings.Contains(l, "] WARNING:") || strings.Contains(l, "] BUG:") || strings.Contains(l, "] INFO: task ") ||
			strings.Contains(l, "] Oops:") || strings.Contains(l, "] Kernel panic") {
			out = append(out, l)
			if len(out) == 20 {
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
