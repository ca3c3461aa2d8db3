package main

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/iotap/iotap/capture"
	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/ksym"
	"github.com/iotap/iotap/mmiotrace"
)

// Flag groups shared by the commands: each is defined once, as a small
// type whose add method defines the flag (with the command's own help
// text, which differs between commands) and whose methods use its value.
//
//	var out outputFlag  // -o/--output
//	var loss lossFlag   // --allow-loss
//	var syms symbolsFlag // --symbols
//	out.add(fl, "-", "output file (- for stdout)")
//	loss.add(fl, "exit 0 even when events were lost")
//	...
//	err := out.write(e, true, args[:1], func(w io.Writer) error { ... })
//	return loss.check(e, "mmio: ", msgs, "--allow-loss to accept")
//	return loss.end(e, res.DropMessage(), "") // a capture's loss
//
// --progress is the root's persistent flag (env.meter); the window flags
// are window.go's.

// outputFlag is -o/--output, the file a command writes ("-": standard
// output).
type outputFlag string

func (o *outputFlag) add(fs *pflag.FlagSet, def, help string) {
	fs.StringVarP((*string)(o), "output", "o", def, help)
}

// stdout reports whether the output is standard output ("" or "-").
func (o outputFlag) stdout() bool { return o == "" || o == "-" }

// create creates the output (env.createOutput).
func (o outputFlag) create(e *env, mode outfile.Mode, inputs ...string) (*outfile.File, error) {
	return e.createOutput(string(o), mode, inputs...)
}

// write creates the output (never over one of inputs; log: compressed
// according to its extension), fills it and ends it (env.endOutput):
// kept when fill succeeds or is interrupted, removed after any other
// error, which write returns. Under a window (withWindow) what fill
// writes names the inputs, not their cuts, as standard output does.
func (o outputFlag) write(e *env, log bool, inputs []string, fill func(io.Writer) error) error {
	var w io.Writer
	var commit func() error
	var err error
	if log {
		w, commit, err = mmioCreateOutput(e, string(o), outfile.Atomic, inputs...)
	} else {
		var f *outfile.File
		f, err = o.create(e, outfile.Atomic, inputs...)
		w, commit = f, func() error { return f.Commit() }
	}
	if err != nil {
		return err
	}
	if e.rename != nil && !o.stdout() {
		rw, commitFile := e.rename.Writer(w), commit
		w, commit = rw, func() error {
			if err := rw.Flush(); err != nil {
				return err
			}
			return commitFile()
		}
	}
	return e.endOutput(commit, fill(w))
}

// lossFlag is --allow-loss: data the input lost (dropped or lost events,
// truncation, skipped lines) is exit 3 unless it is given.
type lossFlag bool

func (l *lossFlag) add(fs *pflag.FlagSet, help string) {
	fs.BoolVar((*bool)(l), "allow-loss", false, help)
}

// check ends a command whose input lost msgs (env.dataLoss): with
// --allow-loss a warning on stderr, else exit 3 with accept in
// parentheses; nil without msgs.
func (l lossFlag) check(e *env, prefix string, msgs []string, accept string) error {
	return e.dataLoss(bool(l), prefix, msgs, accept)
}

// end ends a capture command that lost what loss says ("": nothing),
// remedy after it (capture.EndLoss): exit 3, or with --allow-loss a
// warning.
func (l lossFlag) end(e *env, loss, remedy string) error {
	return capture.EndLoss(loss, remedy, bool(l), e.warn)
}

// symbolsFlag is --symbols: the kernel symbols naming access PCs, of a
// capture bundle or a kallsyms file (mmiotrace.LoadSymbols).
type symbolsFlag string

const mmioSymbolsHelp = "name access PCs as function+0xoff [module] with the kernel symbols of a capture bundle (.tar.gz from mmio capture --bundle) or a kallsyms file"

// add defines --symbols, described by mmioSymbolsHelp and more.
func (s *symbolsFlag) add(fs *pflag.FlagSet, more string) {
	fs.StringVar((*string)(s), "symbols", "", mmioSymbolsHelp+more)
}

// load loads the symbols (nil when the flag is not given): addresses the
// kernel hid are a warning (mmiotrace.LoadSymbolsWarn).
func (s symbolsFlag) load(warn func(string)) (*ksym.Table, error) {
	if s == "" {
		return nil, nil
	}
	return mmiotrace.LoadSymbolsWarn(string(s), warn)
}
