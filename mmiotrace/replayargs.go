package mmiotrace

import (
	"context"
	"fmt"
	"io"
)

// ReplayArgs are a replay as a command line writes it ('iotap mmio
// replay'): Options parses them, Replay runs the replay they describe.
type ReplayArgs struct {
	// StartMark, StopMark, CheckReads, KeepGoing and Delay are taken as
	// they are; the other fields are set by Options.
	ReplayOptions
	DryRun      bool     // print the writes instead of executing them
	Force       bool     // write even though a driver is bound to the device
	Pace        string   // ParsePacing
	Addrs, BARs []string // ParseRanges
	Device      string   // the target's PCI address (ParsePCIAddr); needed unless DryRun
	LogDevice   string   // the device of the log whose accesses are replayed (default: Device; ignored by a dry run)
}

// Options checks the arguments and returns the options of Replay. An
// error names the flag (--pace, --delay, --addr, --bar, --device,
// --log-device) whose value is bad or missing.
func (a *ReplayArgs) Options() (ReplayOptions, error) {
	opt := a.ReplayOptions
	var err error
	if opt.Pacing, err = ParsePacing(a.Pace, a.Delay); err != nil {
		return opt, err
	}
	if opt.Ranges, opt.BARs, err = ParseRanges(a.Addrs, a.BARs); err != nil {
		return opt, err
	}
	if a.Device != "" {
		dev, err := ParsePCIAddr(a.Device)
		if err != nil {
			return opt, fmt.Errorf("--device: %v", err)
		}
		opt.Device = &dev
	}
	if !a.DryRun && opt.Device == nil {
		return opt, fmt.Errorf("replay needs --device PCIADDR (the target) or --dry-run")
	}
	if !a.DryRun && a.LogDevice != "" {
		dev, err := ParsePCIAddr(a.LogDevice)
		if err != nil {
			return opt, fmt.Errorf("--log-device: %v", err)
		}
		opt.Device = &dev
	}
	return opt, nil
}

// Replay replays the log in with opt (from Options) on the target the
// arguments name and prints it with pr: a dry run executes nothing and
// prints each write; else the writes go to Device's memory BARs
// (OpenBARTarget, Linux only; ErrNotSupported elsewhere) and pr prints
// each read that differs (CheckReads). pr's summary ends the output.
func (a *ReplayArgs) Replay(ctx context.Context, in io.Reader, opt ReplayOptions, pr *ReplayPrinter) (ReplayStats, error) {
	var target ReplayTarget
	if a.DryRun {
		opt.OnAccess = pr.Access
		target = DryRun(&opt)
	} else {
		dev, err := ParsePCIAddr(a.Device)
		if err != nil {
			return ReplayStats{}, fmt.Errorf("--device: %v", err)
		}
		t, err := OpenBARTarget(Sysfs{}, dev, a.Force)
		if err != nil {
			return ReplayStats{}, err
		}
		defer t.Close()
		target = t
		opt.OnDivergence = pr.Divergence
	}
	st, err := Replay(ctx, in, target, opt)
	if err == nil {
		pr.Summary(st, a.DryRun)
	}
	return st, err
}
