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
	return e.outputs.Create(path, outfile.Options{Inputs: e.inputSet(inputs...), Mode: mode, Stdout: e.stdout})
}

// inputSet is the set of files an output of a command reading inputs
// must not be: inputs and the traces behind a window's cuts.
func (e *env) inputSet(inputs ...string) *outfile.Inputs {
	var in outfile.Inputs
	in.Add(inputs...)
	in.Add(e.windowed...)
	return &in
}

// endOutput ends a command that wrote an output: commit makes it complete
// when the command succeeded (err nil) or was interrupted (what was written
// so far is kept); after any other error it is left to run, which removes
// it. It returns err (ctx's error when interrupted) or commit's.
func (e *env) endOutput(commit func() error, err error) error {
	if err == nil || e.ctx.Err() != nil {
		if cerr := commit(); err == nil {
			err = cerr
		}
	}
	if err != nil && e.ctx.Err() != nil {
		return e.ctx.Err()
	}
	return err
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
