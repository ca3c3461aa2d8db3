package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/iotap/iotap/capture"
	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/internal/mapfile"
	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/internal/progress"
	"github.com/spf13/cobra"
)

// env carries what every command needs. Commands write only to env.stdout
// and env.stderr so that run can be tested in-process.
type env struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	// outputs are the files the command created (see createOutput).
	outputs outfile.Set
	// windowed are the traces withWindow replaced by their cuts: an
	// output must not be one of them either.
	windowed []string
	// rename, while withWindow runs a command, names the inputs where
	// what the command writes names their cuts (outputFlag.write).
	rename *cut.Renamer
	// written describes files a package wrote itself (a split timeline),
	// for the interruption message.
	written []string
	// progress is --progress; progressSet whether it was given.
	progress, progressSet bool
	meters                []*progress.Meter // see meter
}

// run executes the iotap command line args and returns the first error.
// It is the whole program but for the process exit code (see exitCode).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	e := &env{ctx: ctx, stdout: stdout, stderr: stderr}
	root := newRootCmdFor(e, args)
	if len(args) > 0 && strings.HasPrefix(args[0], cobra.ShellCompRequestCmd) {
		// Only shell completion reads the flags' value lists: building
		// them for every command was a tenth of iotap's start-up.
		registerCompletions(root) // completion.go
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	// A named pipe of the command line whose open waits for its other
	// end is woken when ctx is cancelled: the first SIGINT or SIGTERM
	// ends the command (exit 130) there too.
	stopWaking := mapfile.WakeFIFOs(ctx, pathsIn(args))
	// A mapped input cut shorter while read is an error, not SIGBUS.
	err := mapfile.Do(func() error { return root.ExecuteContext(ctx) })
	woke := stopWaking()
	e.endMeters()
	if ctx.Err() != nil && (err != nil && errors.Is(err, context.Canceled) || woke) {
		if err == nil {
			err = ctx.Err()
		}
		err = e.interrupted(err)
	}
	e.outputs.Abort() // the outputs a failed command left uncommitted
	if err != nil && isCobraUsageError(err) {
		return &codeError{code: exitUsage, err: err}
	}
	return err
}

// pathsIn are the words of the command line args that may name files:
// each argument, the value of --flag=VALUE, and what comes before the
// first ':' (FILE:OFFSET forms such as --pt and --raw).
func pathsIn(args []string) []string {
	var ps []string
	for _, a := range args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v
		}
		ps = append(ps, a)
		if f, _, ok := strings.Cut(a, ":"); ok && f != "" {
			ps = append(ps, f)
		}
	}
	return ps
}

// topCommands are iotap's commands by name, in the order of its help.
var topCommands = []struct {
	name string
	make func(*env) *cobra.Command
}{
	{"version", newVersionCmd},
	{"doctor", newDoctorCmd},
	{"usb", newUSBCmd},
	{"mmio", newMMIOCmd},
	{"events", newEventsCmd},
	{"pt", newPTCmd},
	{"report", newReportCmd},
	{"timeline", newTimelineCmd},
	{"capture", newCaptureCmd},
	{"export", newExportCmd}, // export.go
	{"query", newQueryCmd},   // query.go
	{"cut", newCutCmd},       // cut.go
	{"index", newIndexCmd},   // cut.go
}

// newRootCmdFor is newRootCmd with only the command args name when
// args start with one (iotap usb read ...): the others, their flags and
// subcommands are never looked at then, and building them all was a
// tenth of the start-up of every run (docs/performance.md). Anything
// else (flags first, help, completion, a typo) gets the whole tree.
func newRootCmdFor(e *env, args []string) *cobra.Command {
	if len(args) > 0 {
		for _, c := range topCommands {
			if c.name == args[0] {
				return newRootWith(e, false, c.make(e))
			}
		}
	}
	return newRootCmd(e)
}

func newRootCmd(e *env) *cobra.Command {
	cmds := make([]*cobra.Command, len(topCommands))
	for i, c := range topCommands {
		cmds[i] = c.make(e)
	}
	return newRootWith(e, true, cmds...)
}

// newRootWith is the root command over cmds. Only the whole tree's root
// (whole) can run itself (iotap --version) or reach cobra's completion
// command: a root over one command leaves out its version, which reads
// the build information, and that command, whose four scripts' help
// cobra formats at every run (a twentieth of the start-up's
// instructions, docs/performance.md).
func newRootWith(e *env, whole bool, cmds ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:   "iotap",
		Short: "Trace USB, MMIO, user_events and Intel PT at the Linux hardware/kernel boundary",
		Long: `iotap captures, decodes, filters, analyses, converts and replays traces from four
Linux facilities: usbmon (USB), mmiotrace (MMIO), user_events and Intel Processor Trace.

Exit codes: 0 ok, 1 error, 2 usage, 3 data lost (dropped or lost events,
truncated input) unless --allow-loss is given.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if whole {
		root.Version = versionString(debug.ReadBuildInfo())
	} else {
		root.CompletionOptions.DisableDefaultCmd = true
	}
	root.SetVersionTemplate("iotap {{.Version}}\n")
	root.PersistentFlags().BoolVar(&e.progress, "progress", false, progressHelp)
	root.PersistentPreRun = func(c *cobra.Command, _ []string) {
		e.progressSet = c.Flags().Changed("progress")
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &codeError{code: exitUsage, err: fmt.Errorf("%w\nsee '%s --help'", err, c.CommandPath())}
	})
	root.AddCommand(cmds...)
	strictSubcommands(root)
	return root
}

// Exit codes of the iotap command.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitDataLost = 3
	// exitInterrupted is what shells use for a command stopped by SIGINT.
	exitInterrupted = 130
)

// codeError carries a specific process exit code for err.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

// usageErrorf reports a bad command line (exit code 2).
func usageErrorf(format string, args ...any) error {
	return &codeError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// dataLostError reports that the command completed but data was lost
// (exit code 3). Commands return it unless the user passed --allow-loss.
func dataLostError(format string, args ...any) error {
	return &codeError{code: exitDataLost, err: fmt.Errorf(format, args...)}
}

// dataLoss ends a command whose input lost data (msgs, joined by "; "
// after prefix): with --allow-loss a warning on stderr, else exit 3 with
// accept (the remedy) in parentheses. No msgs: nil.
func (e *env) dataLoss(allowLoss bool, prefix string, msgs []string, accept string) error {
	if len(msgs) == 0 {
		return nil
	}
	msg := prefix + strings.Join(msgs, "; ")
	if allowLoss {
		fmt.Fprintf(e.stderr, "iotap: warning: %s\n", msg)
		return nil
	}
	return dataLostError("%s (%s)", msg, accept)
}

// exitCode prints err (if any) to stderr and returns the process exit code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "iotap: %v\n", err)
	var ee *codeError
	if errors.As(err, &ee) {
		return ee.code
	}
	var le *capture.LossError
	if errors.As(err, &le) {
		return exitDataLost
	}
	if errors.Is(err, outfile.ErrSameFile) {
		return exitUsage // -o names an input: a mistake on the command line
	}
	return exitFailure
}

// isCobraUsageError recognises the argument errors cobra returns as plain
// errors (unknown command, wrong number of arguments).
func isCobraUsageError(err error) bool {
	var ee *codeError
	if errors.As(err, &ee) {
		return false
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "requires at most", "requires exactly", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.HasPrefix(msg, p) || strings.Contains(msg, " "+p) {
			return true
		}
	}
	return false
}
