package vmlab

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Machine describes one lab run: the emulated hardware, what goes into the
// guest and the script the guest runs. The zero value is a valid machine
// with no USB and no NIC that runs an empty script.
type Machine struct {
	// Kernel is the bzImage to boot; empty means IOTAP_VM_KERNEL, or
	// <module root>/../shared/vm/bzImage when that is unset.
	Kernel string
	// MemoryMB is the guest memory (default 1024); CPUs the number of
	// virtual CPUs (default 1: the host has few cores). Under TCG a guest
	// with several vCPUs runs them all in one host thread
	// (-accel tcg,thread=single): multi-threaded TCG let a vCPU hit
	// another's half-done code patching (text_poke_bp) and oops.
	MemoryMB int
	CPUs     int
	// USB adds a qemu-xhci controller (id xhci) with a usb-storage disk
	// (id stor0), a usb-kbd (id kbd0) and a usb-tablet (id tablet0), and a
	// usb-ehci controller (id ehci) with a second usb-storage disk (id
	// stor1). See doc.go for the disk contents. The guest's init waits
	// until all of them have enumerated before it runs Script.
	USB bool
	// NIC adds an e1000 at PCI address E1000PCI whose network is a UDP
	// socket on 127.0.0.1 (never a host network).
	NIC bool
	// Files are written into the guest: guest path to content. A file
	// starting with "#!" is made executable (0755), the others are 0644.
	Files map[string][]byte
	// Binaries are host files copied into the guest with mode 0755: guest
	// path to host path (see BuildGo and BuildC). /bin/iotap is always
	// there; listing it here replaces it.
	Binaries map[string]string
	// Script is run in the guest by busybox "sh -e" in /tmp after the
	// mounts are set up; its exit status is Result.ExitCode. Its output
	// goes to the console.
	Script string
	// Timeout bounds the whole run, boot included (default 5 minutes under
	// TCG, 2 under KVM, and never past the test's deadline); a boot that
	// fails before the script starts is retried with a fresh Timeout. When it
	// expires QEMU is killed and the test fails with the console tail.
	Timeout time.Duration
	// KernelArgs are appended to the kernel command line (which is
	// "console=ttyS0 quiet panic=-1 oops=panic no_timer_check
	// usb-storage.delay_use=0").
	KernelArgs string
	// ExtraQEMUArgs are appended to the QEMU command line.
	ExtraQEMUArgs []string
}

// Result is what a lab run left behind.
type Result struct {
	// Out is the host directory shared with the guest as /out (9p). The
	// lab itself keeps .exit (the script's exit status) and .vmlab/
	// (lab_monitor requests and answers) there.
	Out string
	// Console is everything the guest wrote to its serial console: kernel
	// messages and the script's output.
	Console string
	// ExitCode is the exit status of Machine.Script.
	ExitCode int
	// Accel is the accelerator QEMU used: "tcg" or "kvm".
	Accel string
	// Boot is the time from QEMU start to the script start; Elapsed the
	// time of the whole run.
	Boot, Elapsed time.Duration
}

// ReadOut returns the content of a file the guest wrote under /out (name
// is relative to /out). It fails the test when the file is missing.
func (r *Result) ReadOut(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Out, filepath.FromSlash(name)))
	if err != nil {
		t.Fatalf("vmlab: guest did not leave %s in /out: %v\nconsole tail:\n%s", name, err, tail(r.Console, 40))
	}
	return b
}
