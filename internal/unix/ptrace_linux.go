//go:build linux

package unix

import (
	"fmt"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// ptrace(2) for the PT trace synthesizer (intelpt/ptsynth), which
// single-steps a test program. The caller must hold its OS thread
// (runtime.LockOSThread) from starting the tracee to the last call.

// PtraceRegs are the tracee's general-purpose registers, in the layout of
// the tracer's architecture whatever the tracee's (PTRACE_GETREGS: a
// 32-bit tracee's eip is in Rip; x/sys's PTRACE_GETREGSET would give the
// tracee's own 32-bit layout).
type PtraceRegs = unix.PtraceRegs

// WaitStatus is a wait4 status.
type WaitStatus = unix.WaitStatus

// PtraceSingleStep resumes the tracee for one instruction.
func PtraceSingleStep(pid int) error {
	return ptraceErr("ptrace(PTRACE_SINGLESTEP)", unix.PtraceSingleStep(pid))
}

// PtraceCont resumes the tracee (delivering signal sig unless 0).
func PtraceCont(pid, sig int) error {
	return ptraceErr("ptrace(PTRACE_CONT)", unix.PtraceCont(pid, sig))
}

// PtraceGetRegs reads the tracee's registers.
func PtraceGetRegs(pid int, r *PtraceRegs) error {
	return ptraceErr("ptrace(PTRACE_GETREGS)", getRegs(pid, r))
}

// PtraceSetRegs writes the tracee's registers.
func PtraceSetRegs(pid int, r *PtraceRegs) error {
	return ptraceErr("ptrace(PTRACE_SETREGS)", unix.PtraceSetRegs(pid, r))
}

// PtracePeekData reads tracee memory at addr into b.
func PtracePeekData(pid int, addr uintptr, b []byte) (int, error) {
	n, err := unix.PtracePeekData(pid, addr, b)
	return n, ptraceErr("ptrace(PTRACE_PEEKDATA)", err)
}

// PtracePokeData writes b to tracee memory at addr.
func PtracePokeData(pid int, addr uintptr, b []byte) (int, error) {
	n, err := unix.PtracePokeData(pid, addr, b)
	return n, ptraceErr("ptrace(PTRACE_POKEDATA)", err)
}

// PtraceSetOptionsExitKill makes the kernel kill the tracee when the
// tracer exits.
func PtraceSetOptionsExitKill(pid int) error {
	return ptraceErr("ptrace(PTRACE_SETOPTIONS)", unix.PtraceSetOptions(pid, unix.PTRACE_O_EXITKILL))
}

// Wait4 waits for pid to change state.
func Wait4(pid int, st *WaitStatus) (int, error) {
	for {
		n, err := unix.Wait4(pid, st, 0, nil)
		if err == unix.EINTR {
			continue
		}
		return n, ptraceErr("wait4", err)
	}
}

func ptraceErr(call string, err error) error {
	if err == nil {
		return nil
	}
	return os.NewSyscallError(call, err)
}

// StartStopped starts the program path (no arguments, an empty
// environment) traced, so that it stops at its exec before running an
// instruction; end it with KillWait.
func StartStopped(path string) (*os.Process, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p, err := os.StartProcess(path, []string{path}, &os.ProcAttr{Env: []string{}, Sys: &syscall.SysProcAttr{Ptrace: true}})
	if err != nil {
		return nil, err
	}
	var st WaitStatus
	if _, err := Wait4(p.Pid, &st); err != nil {
		p.Kill()
		return nil, err
	}
	if !st.Stopped() {
		return nil, fmt.Errorf("%s did not stop at its exec (status %#x)", path, uint32(st))
	}
	return p, nil
}

// KillWait kills a process started by StartStopped and reaps it.
func KillWait(p *os.Process) {
	p.Kill()
	var st WaitStatus
	Wait4(p.Pid, &st)
}
