package main

import (
	"io"
)

// mmioProgress returns a progress callback for the job what and a function
// ending its line; nil and a no-op when progress is not shown (see
// env.meter).
func mmioProgress(e *env, what string, busy bool) (func(done, total int64), func()) {
	m := e.meter("iotap: "+what, -1, busy)
	if m == nil {
		return nil, func() {}
	}
	return func(done, total int64) {
		m.SetTotal(total)
		m.Update(done)
	}, m.Done
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
