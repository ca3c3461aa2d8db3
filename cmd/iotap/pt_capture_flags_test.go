package main

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestPTCaptureFlags: pt capture's flags fill intelpt.CaptureArgs: the
// options not given stay nil (the kernel's default), those given are
// set, false too; TSC and branch are always set (default true).
func TestPTCaptureFlags(t *testing.T) {
	var f ptCaptureFlags
	fl := pflag.NewFlagSet("capture", pflag.ContinueOnError)
	f.flags(fl)
	if err := fl.Parse([]string{"--mtc", "--noretcomp=false", "--mtc-period", "3", "--cyc-thresh", "0x2", "--tsc=false", "--pid", "42", "--chunks", "8", "--filter", "filter main", "--duration", "2s"}); err != nil {
		t.Fatal(err)
	}
	o, tr := f.args.Record.Trace.Options, f.args.Record.Trace
	if o.MTC == nil || !*o.MTC || o.NoRetComp == nil || *o.NoRetComp || o.CYC != nil || o.PTW != nil || o.PwrEvt != nil {
		t.Errorf("booleans: mtc %v noretcomp %v cyc %v ptw %v pwr-evt %v", o.MTC, o.NoRetComp, o.CYC, o.PTW, o.PwrEvt)
	}
	if o.MTCPeriod == nil || *o.MTCPeriod != 3 || o.CycThresh == nil || *o.CycThresh != 2 || o.PSBPeriod != nil {
		t.Errorf("periods: mtc %v cyc %v psb %v", o.MTCPeriod, o.CycThresh, o.PSBPeriod)
	}
	if *o.TSC || !*o.Branch || tr.PID != 42 || tr.Chunks != 8 || tr.Order != 4 || len(tr.AddrFilters) != 1 || f.args.Duration != 2*time.Second {
		t.Errorf("tsc %v branch %v pid %d chunks %d order %d filters %q duration %v", *o.TSC, *o.Branch, tr.PID, tr.Chunks, tr.Order, tr.AddrFilters, f.args.Duration)
	}
	if err := fl.Parse([]string{"--psb-period", "x"}); err == nil {
		t.Errorf("--psb-period x: no error")
	}
}

// TestPTTimingFlags: the timing flags set only what is given (0 too),
// with pflag's number syntax and range (uint8: 256 is refused).
func TestPTTimingFlags(t *testing.T) {
	var tm ptTiming
	fl := pflag.NewFlagSet("dump", pflag.ContinueOnError)
	tm.flags(fl, 2)
	if err := fl.Parse([]string{"--mtc-freq", "0", "--cpuid-0x15.ebx", "0xa8"}); err != nil {
		t.Fatal(err)
	}
	if tm.MTCFreq == nil || *tm.MTCFreq != 0 || tm.NomFreq != nil || tm.CPUID15EAX != nil || tm.CPUID15EBX == nil || *tm.CPUID15EBX != 168 {
		t.Errorf("%+v", tm.Timing)
	}
	if err := fl.Parse([]string{"--nom-freq", "256"}); err == nil {
		t.Errorf("--nom-freq 256: no error")
	}
}
