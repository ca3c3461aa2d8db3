//go:build !linux

package vmlab

import "syscall"

// dieWithParent: the lab runs on Linux only; elsewhere nothing is set.
func dieWithParent() *syscall.SysProcAttr { return nil }
