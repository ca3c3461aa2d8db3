package progress

import (
	"io"
	"os"

	"github.com/iotap/iotap/internal/unix"
)

// Choice is a command line's --progress: Set says whether it was given,
// On is its value.
type Choice struct{ Set, On bool }

// Shown says whether a job shows its progress on stderr. With --progress
// given, as it says; else when stderr is a terminal, unless the job prints
// its records on stdout (busy) and stdout is a terminal too (the meter
// would mix with them).
func (c Choice) Shown(stderrTerm, stdoutTerm, busy bool) bool {
	if c.Set {
		return c.On
	}
	return stderrTerm && !(busy && stdoutTerm)
}

// IsTerminal reports whether w is a file open on a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && unix.IsTerminal(f.Fd())
}
