package main

import (
	"context"
	"errors"

	"github.com/iotap/iotap/internal/outfile"
)

// createOutput creates a command's output file through outfile (0600, never
// through a link, never over one of inputs; "-" is e.stdout). Outputs not
// committed when the command returns are removed by run.
func (e *env) createOutput(path string, mode outfile.Mode, inputs ...string) (*outfile.File, error) {
	var in outfile.Inputs
	in.Add(inputs...)
	return e.outputs.Create(path, outfile.Options{Inputs: &in, Mode: mode, Stdout: e.stdout})
}

// interrupted turns the context error of a command stopped by SIGINT or
// SIGTERM into exit 130 with what was written (committed outputs are
// complete files holding the data read before the signal).
func (e *env) interrupted(err error) error {
	msg := "interrupted"
	if c := context.Cause(e.ctx); c != nil && !errors.Is(c, context.Canceled) {
		msg += " (" + c.Error() + ")"
	}
	msg += e.outputs.Wrote(e.written...)
	return &codeError{code: exitInterrupted, err: &messageError{msg: msg, err: err}}
}

// messageError replaces the message of err (errors.Is still sees err).
type messageError struct {
	msg string
	err error
}

func (m *messageError) Error() string { return m.msg }
func (m *messageError) Unwrap() error { return m.err }
