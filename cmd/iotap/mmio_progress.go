package main

import (
	"fmt"
	"io"
	"os"
	"time"

	iunix "github.com/iotap/iotap/internal/unix"
)

// mmioProgress returns a progress callback printing to stderr at most
// twice a second, and a function ending the line; both do nothing unless
// stderr is a terminal.
func mmioProgress(e *env, what string) (func(done, total int64), func()) {
	f, ok := e.stderr.(*os.File)
	if !ok || !iunix.IsTerminal(f.Fd()) {
		return nil, func() {}
	}
	var last time.Time
	printed := false
	return func(done, total int64) {
			if time.Since(last) < 500*time.Millisecond {
				return
			}
			last = time.Now()
			printed = true
			if total > 0 {
				fmt.Fprintf(f, "\r%s: %3d%% (%d of %d MB)", what, done*100/total, done>>20, total>>20)
			} else {
				fmt.Fprintf(f, "\r%s: %d MB", what, done>>20)
			}
		}, func() {
			if printed {
				fmt.Fprint(f, "\r\033[K")
			}
		}
}

// mmioCountingReader counts the bytes read through it.
type mmioCountingReader struct {
	r        io.Reader
	n, total int64
	progress func(done, total int64)
}

func (c *mmioCountingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.progress != nil {
		c.progress(c.n, c.total)
	}
	return n, err
}
