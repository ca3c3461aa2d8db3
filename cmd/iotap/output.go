package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/iotap/iotap/internal/outfile"
)

// createOutput creates a command's output file through outfile (0600, never
// through a link, never over one of inputs; "-" is e.stdout). Outputs not
// committed when the command returns are removed by run.
func (e *env) createOutput(path string, mode outfile.Mode, inputs ...string) (*outfile.File, error) {
	var in outfile.Inputs
	in.Add(inputs...)
	f, err := outfile.Create(path, outfile.Options{Inputs: &in, Mode: mode, Stdout: e.stdout})
	if err != nil {
		return nil, err
	}
	e.outputs = append(e.outputs, f)
	return f, nil
}

// abortOutputs removes the outputs a failed command left uncommitted.
func (e *env) abortOutputs() {
	for _, f := range e.outputs {
		f.Abort()
	}
	e.outputs = nil
}

// interrupted turns the context error of a command stopped by SIGINT or
// SIGTERM into exit 130 with what was written (committed outputs are
// complete files holding the data read before the signal).
func (e *env) interrupted(err error) error {
	msg := "interrupted"
	if c := context.Cause(e.ctx); c != nil && !errors.Is(c, context.Canceled) {
		msg += " (" + c.Error() + ")"
	}
	var wrote []string
	for _, f := range e.outputs {
		if f.Committed() && f.Name() != "-" {
			wrote = append(wrote, fmt.Sprintf("%s (%d bytes, complete up to the interruption)", f.Name(), f.Written()))
		}
	}
	wrote = append(wrote, e.written...)
	switch {
	case len(wrote) > 0:
		msg += ": wrote " + strings.Join(wrote, ", ")
	case len(e.outputs) > 0 && e.outputs[0].Name() != "-":
		msg += ": nothing written"
	}
	return &codeError{code: exitInterrupted, err: &messageError{msg: msg, err: err}}
}

// messageError replaces the message of err (errors.Is still sees err).
type messageError struct {
	msg string
	err error
}

func (m *messageError) Error() string { return m.msg }
func (m *messageError) Unwrap() error { return m.err }
