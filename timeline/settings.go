package timeline

import (
	"errors"
	"fmt"
	"time"

	"github.com/iotap/iotap/intelpt/calls"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/regdb"
)

// Settings are the settings of 'iotap timeline' (and of 'iotap report -o
// FILE.pftrace') that name files to load: a program fills them as the
// command's flags do and Apply turns them into Options.
type Settings struct {
	// DB is the register database for MMIO names: a file (rnndb XML or
	// YAML) or a shipped name (regdb.Open); "": the shipped one of each
	// device.
	DB string
	// Symbols is a bundle or kallsyms file naming access PCs
	// (mmiotrace.LoadSymbolsWarn).
	Symbols string
	// Clocks is the clocks file (clocks.json) aligning the sources.
	Clocks string
	// BandwidthWindow is the window of the USB bandwidth counters.
	BandwidthWindow time.Duration
	// PTCalls adds the function calls of Intel PT inputs, their files
	// looked for under Sysroot (and the default build-id directories),
	// only calls at least PTResolution long.
	PTCalls      bool
	Sysroot      string
	PTResolution time.Duration
}

// Check checks the settings as 'iotap timeline' takes them from its
// flags: BandwidthWindow must be positive (Apply leaves a zero one to
// Options' default), PTResolution not negative (as calls.Job's). Errors
// name the flag.
func (s *Settings) Check() error {
	if s.BandwidthWindow <= 0 {
		return errors.New("--bandwidth-window must be positive")
	}
	if s.PTResolution < 0 {
		return fmt.Errorf("--pt-resolution %v: want 0 (all calls) or more", s.PTResolution)
	}
	return nil
}

// ExpandInputs is ExpandInputs(args) for s: when s.Clocks is "", the
// clocks.json of the first directory that has one becomes s.Clocks and
// is returned as clocks, to be said (also with an error for a later
// argument); a Clocks already set is kept, clocks "".
func (s *Settings) ExpandInputs(args []string) (inputs []string, clocks string, err error) {
	inputs, found, err := ExpandInputs(args)
	if found != "" && s.Clocks == "" {
		s.Clocks, clocks = found, found
	}
	return inputs, clocks, err
}

// Apply sets opt from s: it loads the database (an unknown name is an
// error wrapping regdb.ErrNotFound), the symbols (hidden kernel
// addresses are a warning to opt.Warn) and the clocks file.
func (s *Settings) Apply(opt *Options) error {
	opt.BandwidthWindowNS = s.BandwidthWindow.Nanoseconds()
	var err error
	if s.DB != "" {
		if opt.DB, err = regdb.Open(s.DB); err != nil {
			return err
		}
	}
	if s.Symbols != "" {
		warn := opt.Warn
		if warn == nil {
			warn = func(string) {}
		}
		if opt.Symbols, err = mmiotrace.LoadSymbolsWarn(s.Symbols, warn); err != nil {
			return err
		}
	}
	if s.Clocks != "" {
		if opt.Clocks, err = LoadClocks(s.Clocks); err != nil {
			return err
		}
	}
	if s.PTCalls {
		opt.PTCalls = &calls.Options{Finder: calls.Finder(s.Sysroot, calls.BuildIDDirs(nil, nil)), Demangle: true, Resolution: uint64(s.PTResolution.Nanoseconds())}
	}
	return nil
}
