package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/internal/timerange"
)

// withWindow gives a reader command --from/--to: its trace arguments (and
// --pt) are replaced by their cut of the window (cut.OpenWindow), which
// the command then reads as it reads any trace.
func withWindow(e *env, c *cobra.Command) *cobra.Command {
	var w windowFlags
	fl := c.Flags()
	w.add(fl, "read only the records at or after `TIME`: seconds from the trace's first record (1.5, 200ms), @T on its clock, RFC 3339, or mark:NAME (see 'iotap cut --help'); the trace is cut with 'iotap cut' (seeking with its index) and the cut is read", windowToHelp, "")
	run := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		name := strings.TrimPrefix(cmd.CommandPath(), "iotap ")
		spec, err := w.spec(name)
		if err != nil {
			return err
		}
		if !spec.Set() {
			return run(cmd, args)
		}
		var ws cut.Windows
		defer ws.Close()
		e.windowed = append(e.windowed, args...)
		if args, err = ws.OpenAll(e.ctx, args, spec, e.warn); err != nil {
			return windowError(name, err)
		}
		if f := fl.Lookup("pt"); f != nil && f.Value.String() != "" {
			e.windowed = append(e.windowed, f.Value.String())
			p, err := ws.Open(e.ctx, f.Value.String(), spec, e.warn)
			if err != nil {
				return windowError(name, err)
			}
			f.Value.Set(p)
		}
		// A write to a closed pipe ('... | head -1') ends iotap as SIGPIPE
		// would (status 141) once the cuts are removed: asking for the
		// signal makes such a write fail with EPIPE instead of killing.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGPIPE)
		defer signal.Stop(sig)
		exit := func() { os.Exit(128 + 13) }
		// What the command prints, and writes to -o, names the inputs,
		// not their cuts.
		stdout, stderr := e.stdout, e.stderr
		e.rename = ws.Renamer()
		defer func() { e.stdout, e.stderr, e.rename = stdout, stderr, nil }()
		return ws.Run(stdout, stderr, exit, func(o, we io.Writer) error {
			e.stdout, e.stderr = o, we
			err := run(cmd, args)
			if f := fl.Lookup("allow-loss"); ws.Truncated() != "" && err == nil && (f == nil || f.Value.String() != "true") {
				err = dataLostError("%s (--allow-loss to accept)", ws.Truncated())
			}
			return err
		})
	}
	return c
}

// windowUsage is err of the command name: a usage error when it is a
// window that does not resolve (cut.WindowError), else err itself.
func windowUsage(name string, err error) error {
	if we := (*cut.WindowError)(nil); errors.As(err, &we) {
		return usageErrorf("%s: %v", name, err)
	}
	return err
}

// windowError is windowUsage, any other error named too (nil: nil).
func windowError(name string, err error) error {
	if u := windowUsage(name, err); u != err || err == nil {
		return u
	}
	return fmt.Errorf("%s: %w", name, err)
}

// mmioOpenLog opens the mmiotrace log at path for the command name
// (cut.OpenLog): a window that does not resolve is a usage error, other
// errors of a window's cut are named by the command, those of the whole
// log say "mmio: ".
func mmioOpenLog(e *env, name, path string, opt cut.LogOptions) (*cut.Log, error) {
	opt.Warn = e.warn
	l, err := cut.OpenLog(e.ctx, path, opt)
	if u := windowUsage(name, err); u != err {
		return nil, u
	} else if err != nil && opt.Window.Set() && !(opt.Stamps && path == "-") {
		return nil, fmt.Errorf("%s: %w", name, err)
	} else if err != nil {
		return nil, fmt.Errorf("mmio: %w", err)
	}
	return l, nil
}

// warn prints a warning on stderr.
func (e *env) warn(s string) { fmt.Fprintf(e.stderr, "iotap: warning: %s\n", s) }

// windowToHelp is the help of --to, windowTimeHelp that of --time.
const (
	windowToHelp   = "only the records before `TIME` (same forms as --from; +D: D after --from)"
	windowTimeHelp = "the same as --from LO --to HI, written LO..HI (either end may be empty)"
)

// windowFlags are a command's --from/--to, and --time LO..HI.
type windowFlags struct{ from, to, time string }

// add registers --from and --to with their help texts, and --time when
// timeHelp is set.
func (w *windowFlags) add(fl *pflag.FlagSet, fromHelp, toHelp, timeHelp string) {
	fl.StringVar(&w.from, "from", "", fromHelp)
	fl.StringVar(&w.to, "to", "", toHelp)
	if timeHelp != "" {
		fl.StringVar(&w.time, "time", "", timeHelp)
	}
}

// spec parses the window: an error is a usage error, after the command
// name unless it is "".
func (w *windowFlags) spec(name string) (timerange.Spec, error) {
	spec, err := timerange.ParseSpecFlags(w.from, w.to, w.time)
	if err != nil && name != "" {
		return spec, usageErrorf("%s: %v", name, err)
	} else if err != nil {
		return spec, usageErrorf("%v", err)
	}
	return spec, nil
}
