//go:build linux

package ptsynth

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/iotap/iotap/internal/unix"
)

// Record runs path with args under ptrace, stops it at the run-time
// address that start gives (called with the process's mappings once the
// program is loaded: before its first instruction, at exec), then
// single-steps it until it exits, and returns the instructions it ran.
// maxSteps bounds the run (0: 10 million).
func Record(path string, args []string, start func(pid int, maps []Map) (uint64, error), maxSteps int) (*Run, error) {
	if maxSteps <= 0 {
		maxSteps = 10_000_000
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	cmd.Env = []string{"LC_ALL=C"}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ptsynth: %w", err)
	}
	pid := cmd.Process.Pid
	ok := false
	defer func() {
		if !ok {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	var st unix.WaitStatus
	if _, err := unix.Wait4(pid, &st); err != nil {
		return nil, err
	}
	if !st.Stopped() {
		return nil, fmt.Errorf("ptsynth: %s did not stop at exec (status %v)", path, st)
	}
	if err := unix.PtraceSetOptionsExitKill(pid); err != nil {
		return nil, err
	}
	maps, err := readMaps(pid)
	if err != nil {
		return nil, err
	}
	at, err := start(pid, maps)
	if err != nil {
		return nil, err
	}
	// Breakpoint at the start address, run to it, restore.
	var orig [8]byte
	if _, err := unix.PtracePeekData(pid, uintptr(at), orig[:]); err != nil {
		return nil, err
	}
	bp := orig
	bp[0] = 0xcc
	if _, err := unix.PtracePokeData(pid, uintptr(at), bp[:]); err != nil {
		return nil, err
	}
	if err := unix.PtraceCont(pid, 0); err != nil {
		return nil, err
	}
	if _, err := unix.Wait4(pid, &st); err != nil {
		return nil, err
	}
	if !st.Stopped() || st.StopSignal() != syscall.SIGTRAP {
		return nil, fmt.Errorf("ptsynth: %s did not reach %#x (status %v)", path, at, st)
	}
	if _, err := unix.PtracePokeData(pid, uintptr(at), orig[:]); err != nil {
		return nil, err
	}
	var regs unix.PtraceRegs
	if err := unix.PtraceSetIP(pid, at); err != nil {
		return nil, err
	}
	if err := unix.PtraceGetRegs(pid, &regs); err != nil {
		return nil, err
	}
	// The address space now holds every library the program links
	// (no dlopen in the test programs): snapshot it.
	r := &Run{PID: pid, Comm: commOf(path)}
	if r.Maps, err = readMaps(pid); err != nil {
		return nil, err
	}
	if r.Code, err = snapshot(pid, r.Maps); err != nil {
		return nil, err
	}
	for len(r.Steps) < maxSteps {
		if err := unix.PtraceGetRegs(pid, &regs); err != nil {
			return nil, err
		}
		// a rep-prefixed string instruction traps once per iteration: it
		// is one instruction (a branch to itself would never end)
		if n := len(r.Steps); n == 0 || r.Steps[n-1].IP != regs.Rip {
			r.Steps = append(r.Steps, Step{IP: regs.Rip, SP: regs.Rsp})
		}
		if err := unix.PtraceSingleStep(pid); err != nil {
			return nil, err
		}
		if _, err := unix.Wait4(pid, &st); err != nil {
			return nil, err
		}
		if st.Exited() || st.Signaled() {
			r.ExitStatus = st.ExitStatus()
			ok = true
			cmd.Wait()
			return r, nil
		}
		if !st.Stopped() || st.StopSignal() != syscall.SIGTRAP {
			return nil, fmt.Errorf("ptsynth: %s stopped with %v at step %d (ip %#x): signals are not synthesized", path, st.StopSignal(), len(r.Steps), regs.Rip)
		}
	}
	return nil, fmt.Errorf("ptsynth: %s ran more than %d instructions", path, maxSteps)
}

func commOf(path string) string {
	c := path[strings.LastIndexByte(path, '/')+1:]
	if len(c) > 15 {
		c = c[:15]
	}
	return c
}

// readMaps parses /proc/PID/maps.
func readMaps(pid int) ([]Map, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return nil, fmt.Errorf("ptsynth: %w", err)
	}
	return ParseMaps(b)
}

// ParseMaps parses the text of /proc/PID/maps.
func ParseMaps(b []byte) ([]Map, error) {
	var out []Map
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			return nil, fmt.Errorf("ptsynth: bad maps line %q", sc.Text())
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		var m Map
		var err1, err2, err3, err4 error
		m.Start, err1 = strconv.ParseUint(lo, 16, 64)
		m.End, err2 = strconv.ParseUint(hi, 16, 64)
		m.Off, err3 = strconv.ParseUint(f[2], 16, 64)
		m.Ino, err4 = strconv.ParseUint(f[4], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || len(f[1]) != 4 {
			return nil, fmt.Errorf("ptsynth: bad maps line %q", sc.Text())
		}
		m.Perm = f[1]
		maj, min, _ := strings.Cut(f[3], ":")
		a, _ := strconv.ParseUint(maj, 16, 32)
		c, _ := strconv.ParseUint(min, 16, 32)
		m.Maj, m.Min = uint32(a), uint32(c)
		if len(f) >= 6 {
			m.Path = strings.Join(f[5:], " ")
		}
		out = append(out, m)
	}
	return out, nil
}

// snapshot reads the executable mappings' bytes from /proc/PID/mem.
func snapshot(pid int, maps []Map) (map[uint64][]byte, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	if err != nil {
		return nil, fmt.Errorf("ptsynth: %w", err)
	}
	defer f.Close()
	code := map[uint64][]byte{}
	for _, m := range maps {
		if !m.Exec() || m.Path == "[vsyscall]" {
			continue
		}
		b := make([]byte, m.End-m.Start)
		if _, err := f.ReadAt(b, int64(m.Start)); err != nil {
			return nil, fmt.Errorf("ptsynth: reading %s at %#x: %w", m.Path, m.Start, err)
		}
		code[m.Start] = b
	}
	return code, nil
}
