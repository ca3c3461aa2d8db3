package main

import (
	"io"
	"os"

	"github.com/iotap/iotap/internal/progress"
)

// progressHelp documents --progress.
const progressHelp = "show the progress of long jobs on stderr even when it is not a terminal (a line every 5 s); --progress=false never shows it. On a terminal it is shown by default for a job over 2 s"

// meter returns a progress meter on stderr for a job of total bytes (<= 0
// when unknown), or nil when progress is not shown. It is shown when
// stderr is a terminal — unless busy, the job printing its records on
// stdout, and stdout is a terminal too — or with --progress; never with
// --progress=false. run ends the meters when the command returns.
func (e *env) meter(what string, total int64, busy bool) *progress.Meter {
	c := progress.Choice{Set: e.progressSet, On: e.progress}
	if !c.Shown(progress.IsTerminal(e.stderr), progress.IsTerminal(e.stdout), busy) {
		return nil
	}
	m := progress.New(e.stderr, what, total, progress.Options{Terminal: progress.IsTerminal(e.stderr)})
	e.meters = append(e.meters, m)
	return m
}

// meterReader returns r (the content of f, an input) counted by a meter
// of the job what, with f's size as the total when f is a regular file;
// r itself when progress is not shown.
func (e *env) meterReader(what string, f *os.File, r io.Reader, busy bool) io.Reader {
	total := int64(-1)
	if f != nil {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			total = fi.Size()
		}
	}
	return e.meter(what, total, busy).Reader(r)
}

// endMeters erases the progress lines.
func (e *env) endMeters() {
	for _, m := range e.meters {
		m.Done()
	}
	e.meters = nil
}
