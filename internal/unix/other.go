//go:build !linux

package unix

import (
	"fmt"
	"os"
	"runtime"
)

// On systems other than Linux iotap decodes traces but cannot capture:
// these stand-ins let the portable packages and the CLI build, and the
// capture paths return an error wrapping ErrNotSupported.

// Clock ids for ClockNS (Linux's values).
const (
	ClockRealtime  int32 = 0
	ClockMonotonic int32 = 1
	ClockBoottime  int32 = 7
)

func notLinux(what string) error {
	return fmt.Errorf("%w: %s needs Linux (this is %s)", ErrNotSupported, what, runtime.GOOS)
}

// ClockNS fails: the capture clocks are Linux's.
func ClockNS(id int32) (int64, error) { return 0, notLinux("clock_gettime") }

// IsTerminal reports false: progress lines are only drawn on Linux.
func IsTerminal(fd uintptr) bool { return false }

// KernelRelease fails: there is no Linux kernel.
func KernelRelease() (string, error) { return "", notLinux("uname") }

// Geteuid returns the effective user id (-1 on Windows).
func Geteuid() int { return os.Geteuid() }

// Capabilities fails: capabilities are Linux's.
func Capabilities() (uint64, error) { return 0, notLinux("capget") }

// ThreadNice fails: thread nice values are Linux's.
func ThreadNice() (int, error) { return 0, notLinux("per-thread nice") }

// SetThreadNice fails: thread nice values are Linux's.
func SetThreadNice(n int) error { return notLinux("per-thread nice") }

// WaitingForFIFO reports false: only Linux says where a thread sleeps.
func WaitingForFIFO() bool { return false }

// WakeFIFO does nothing and reports false: named pipes are only woken on
// Linux.
func WakeFIFO(path string) bool { return false }
