package ndjson

import (
	"bytes"
	"errors"
	"io"
)

// ErrLimit ends a stream whose LineLimit was reached.
var ErrLimit = errors.New("count reached")

// LineLimit passes the first Left lines written through it to W, then
// fails with ErrLimit: -c N on commands that print a line per record,
// like tshark -c. The "input" record that starts an NDJSON stream is not
// counted when it comes whole in one Write (as every writer of a stream
// writes it).
type LineLimit struct {
	W    io.Writer
	Left uint64
}

// inputRecord starts the "input" record of a stream (Input).
var inputRecord = []byte(`{"kind":"input",`)

func (l *LineLimit) Write(p []byte) (int, error) {
	if l.Left == 0 {
		return 0, ErrLimit
	}
	n := 0
	for n < len(p) && l.Left > 0 {
		i := bytes.IndexByte(p[n:], '\n')
		if i < 0 {
			n = len(p)
			break
		}
		if !bytes.HasPrefix(p[n:], inputRecord) {
			l.Left--
		}
		n += i + 1
	}
	m, err := l.W.Write(p[:n])
	if err == nil && n < len(p) {
		err = ErrLimit
	}
	return m, err
}
