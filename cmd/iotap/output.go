package main

import (
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
