//go:build linux && !amd64

package unix

import "golang.org/x/sys/unix"

func getRegs(pid int, r *PtraceRegs) error { return unix.PtraceGetRegs(pid, r) }
