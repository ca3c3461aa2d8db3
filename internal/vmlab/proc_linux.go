package vmlab

import "syscall"

// dieWithParent makes the child get SIGKILL when the test process dies.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
