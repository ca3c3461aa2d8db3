package main

import (
	"errors"

	"github.com/iotap/iotap/internal/ndjson"
)

// limitStdout makes e.stdout stop after n lines (n = 0: no limit;
// ndjson.LineLimit, like tshark -c) and returns the function mapping the
// command's error: the limit reached is success.
func (e *env) limitStdout(n uint64) func(error) error {
	if n > 0 {
		e.stdout = &ndjson.LineLimit{W: e.stdout, Left: n}
	}
	return func(err error) error {
		if errors.Is(err, ndjson.ErrLimit) {
			return nil
		}
		return err
	}
}
