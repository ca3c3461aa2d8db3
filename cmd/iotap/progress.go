package main

import "github.com/iotap/iotap/internal/progress"

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

// endMeters erases the progress lines.
func (e *env) endMeters() {
	for _, m := range e.meters {
		m.Done()
	}
	e.meters = nil
}
