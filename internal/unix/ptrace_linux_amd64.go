package unix

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PtraceSetIP sets the tracee's instruction pointer alone (PTRACE_POKEUSER
// of rip): PTRACE_SETREGS would also write the fs/gs bases it read, which
// for a 32-bit tracee are not its TLS segments and break them.
func PtraceSetIP(pid int, ip uint64) error {
	var r PtraceRegs
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], ip)
	_, err := unix.PtracePokeUser(pid, unsafe.Offsetof(r.Rip), b[:])
	return ptraceErr("ptrace(PTRACE_POKEUSER)", err)
}

// getRegs is PTRACE_GETREGS: the registers in the tracer's (64-bit)
// layout also for a 32-bit tracee (PTRACE_GETREGSET, which x/sys and
// syscall use, gives the tracee's own layout).
func getRegs(pid int, r *PtraceRegs) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GETREGS, uintptr(pid), 0, uintptr(unsafe.Pointer(r)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
