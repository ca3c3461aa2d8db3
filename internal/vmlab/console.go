package vmlab

import (
	"bytes"
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
