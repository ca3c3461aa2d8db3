package vmlab

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"time"
)

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

// Console lines of the guest's init (init.sh) that mark its stages.
const (
	scriptStartLine = "vmlab: script start"
	scriptExitLine  = "vmlab: script exit "
)

// noExitError explains a guest that powered off without leaving the
// script's exit status in /out/.exit, from its console: a boot that died
// before the script (ErrBootFailed, which Run retries), a guest that
// stopped while the script ran (a kernel panic, or init killed), or a
// script that ended but whose status never reached the host (the 9p
// share failed).
func noExitError(console, stderr string) error {
	why := panicLine(console)
	ctx := "console tail:\n" + tail(console, 60)
	if k := kernelComplaints(console); k != "" {
		// The oops or BUG that led to the panic, often far above the tail.
		ctx = "guest kernel complaints:\n" + k + "\n" + ctx
	}
	if stderr != "" {
		ctx = "qemu stderr:\n" + tail(stderr, 10) + "\n" + ctx
	}
	switch {
	case !strings.Contains(console, scriptStartLine):
		if why == "" {
			why = "no kernel panic on the console"
			if strings.Contains(console, "vmlab: cannot mount the 9p share") {
				why = "init could not mount the 9p share at /out"
			}
		}
		return fmt.Errorf("%w: the guest powered off without finishing its script, before it started (%s)\n%s", ErrBootFailed, why, ctx)
	case !strings.Contains(console, scriptExitLine):
		if why == "" {
			why = "no kernel panic on the console: did the script power the guest off or kill init?"
		}
		return fmt.Errorf("vmlab: the guest powered off without finishing its script, while it ran (%s)\n%s", why, ctx)
	default:
		i := strings.LastIndex(console, scriptExitLine) + len(scriptExitLine)
		status, _, _ := strings.Cut(console[i:], "\n")
		return fmt.Errorf("vmlab: the guest's script exited %s but its status never reached /out/.exit on the host (the 9p share failed)\n%s", strings.TrimSpace(status), ctx)
	}
}

// panicLine returns the console line saying why the guest kernel
// panicked, or "".
func panicLine(console string) string {
	for _, l := range strings.Split(console, "\n") {
		if i := strings.Index(l, "Kernel panic - not syncing"); i >= 0 {
			return strings.TrimSpace(l[i:])
		}
	}
	return ""
}
