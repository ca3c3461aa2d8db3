package main

import (
	"bytes"
	"errors"
	"io"
)

// errCountReached ends a command whose -c N lines were written.
var errCountReached = errors.New("count reached")

// lineLimit passes the first n lines written through it to w, then fails
// with errCountReached (-c N on commands that print a line per packet or
// transfer, like tshark -c).
type lineLimit struct {
	w    io.Writer
	left uint64
}

func (l *lineLimit) Write(p []byte) (int, error) {
	if l.left == 0 {
		return 0, errCountReached
	}
	n := 0
	for n < len(p) && l.left > 0 {
		i := bytes.IndexByte(p[n:], '\n')
		if i < 0 {
			n = len(p)
			break
		}
		// the "input" record that starts an NDJSON stream is not counted
		if !bytes.HasPrefix(p[n:], inputRecord) {
			l.left--
		}
		n += i + 1
	}
	m, err := l.w.Write(p[:n])
	if err == nil && n < len(p) {
		err = errCountReached
	}
	return m, err
}

// inputRecord starts the "input" record of an NDJSON stream
// (docs/ndjson.md), which -c does not count.
var inputRecord = []byte(`{"kind":"input",`)

// limitStdout makes e.stdout stop after n lines (n = 0: no limit) and
// returns the function mapping the command's error: errCountReached is
// success.
func (e *env) limitStdout(n uint64) func(error) error {
	if n > 0 {
		e.stdout = &lineLimit{w: e.stdout, left: n}
	}
	return func(err error) error {
		if errors.Is(err, errCountReached) {
			return nil
		}
		return err
	}
}
