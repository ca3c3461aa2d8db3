package regdb

import (
	"context"
	"io"

	"github.com/iotap/iotap/mmiotrace"
)

// LogInput is a log to name with NameInput.
type LogInput struct {
	// File and Format name the log in the "input" record that starts the
	// NDJSON output (mmiotrace.AppendNDJSONInput).
	File, Format string
	// KeepGoing skips the lines that do not parse (counted in the loss);
	// false stops at the first.
	KeepGoing bool
}

// NameInput is 'iotap mmio names' of the log read from r (plain or
// compressed): with asJSON the input record of in first, then NameLog.
// It returns the log's loss (mmiotrace.Reader.Loss: lost events, lines
// skipped, a cut end) and the error that ended the naming.
func (n *Namer) NameInput(ctx context.Context, r io.Reader, w io.Writer, in LogInput, asJSON bool) (loss []string, err error) {
	rd := mmiotrace.NewReader(r)
	defer rd.Close()
	rd.SetKeepGoing(in.KeepGoing)
	if asJSON {
		if _, err := w.Write(mmiotrace.AppendNDJSONInput(nil, in.File, in.Format)); err != nil {
			return nil, err
		}
	}
	err = n.NameLog(ctx, rd, w, asJSON)
	return rd.Loss(), err
}
