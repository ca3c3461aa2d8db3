package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/intelpt"
)

// ptTiming are the timing flags of pt dump, stats and flow: the decoder
// parameters perf.data and capture.json record, given or overridden.
type ptTiming struct{ intelpt.Timing }

// flags adds them to fl; detail 1 says where --nom-freq is read, 2 also
// what the CPUID words are.
func (t *ptTiming) flags(fl *pflag.FlagSet, detail int) {
	nom, eax, ebx := "nominal core:bus ratio `n`", "CPUID[0x15].EAX", "CPUID[0x15].EBX"
	if detail > 0 {
		nom += " (MSR_PLATFORM_INFO[15:8])"
	}
	if detail > 1 {
		eax, ebx = eax+" (crystal clock ratio denominator)", ebx+" (crystal clock ratio numerator)"
	}
	optUint(fl, &t.MTCFreq, "mtc-freq", "MTC frequency `n` (IA32_RTIT_CTL[17:14])")
	optUint(fl, &t.NomFreq, "nom-freq", nom)
	optUint(fl, &t.CPUID15EAX, "cpuid-0x15.eax", eax)
	optUint(fl, &t.CPUID15EBX, "cpuid-0x15.ebx", ebx)
}

// ptFileFlags adds the flags that find the traced programs' files named
// by a perf.data's or capture directory's sideband (calls.Input.Finder,
// calls.LoadKernel): --sysroot, --buildid-dir unless buildIDDirs is nil,
// --kernel and --kallsyms unless kernel is nil; ctx starts their help,
// saying when they apply.
func ptFileFlags(fl *pflag.FlagSet, ctx string, sysroot *string, buildIDDirs *[]string, kernel, kallsyms *string) {
	fl.StringVar(sysroot, "sysroot", "", ctx+"look for the mapped files under `DIR`")
	if buildIDDirs != nil {
		fl.StringArrayVar(buildIDDirs, "buildid-dir", nil, ctx+"build-id cache `DIR` (perf's ~/.debug layout; repeatable; default ~/.debug)")
	}
	if kernel != nil {
		fl.StringVar(kernel, "kernel", "", ctx+"the kernel's code: a vmlinux `FILE` or /proc/kcore (kernel-mode trace)")
		fl.StringVar(kallsyms, "kallsyms", "", ctx+"kernel symbols (function names, KASLR slide) from `FILE` (/proc/kallsyms of the traced machine)")
	}
}

// ptOpen opens a pt dump or stats input (detect.OpenPT); a byte range
// outside the file is a usage error.
func ptOpen(path string, stream bool) (*detect.PTInput, error) {
	in, err := detect.OpenPT(path, stream)
	if re := (*intelpt.RangeError)(nil); errors.As(err, &re) {
		return nil, usageErrorf("%w", err)
	}
	return in, err
}

// ptCPU is the --cpu of the command cmd: the CPU f/m[/s] whose errata
// apply, nil for "" or none.
func ptCPU(cmd, s string) (*intelpt.CPU, error) {
	if s == "" || s == "none" {
		return nil, nil
	}
	cpu, err := intelpt.ParseCPU(s)
	if err != nil {
		return nil, usageErrorf("%s: --cpu: %v", cmd, err)
	}
	return &cpu, nil
}

// optional is a flag bound to a field that stays nil unless the flag is
// given (intelpt.Options: the kernel's default applies then).
type optional[T any] struct {
	p     **T
	typ   string // as pflag names it: bool, uint64
	parse func(string) (T, error)
}

func (o optional[T]) String() string {
	if *o.p == nil {
		return ""
	}
	return fmt.Sprint(**o.p)
}

func (o optional[T]) Type() string { return o.typ }

func (o optional[T]) Set(s string) error {
	v, err := o.parse(s)
	if err == nil {
		*o.p = &v
	}
	return err
}

// optBool defines a boolean flag stored in *p when given.
func optBool(fl *pflag.FlagSet, p **bool, name, usage string) {
	fl.VarPF(optional[bool]{p, "bool", strconv.ParseBool}, name, "", usage).NoOptDefVal = "true"
}

// optUint defines a number flag stored in *p when given.
func optUint[T uint8 | uint32 | uint64](fl *pflag.FlagSet, p **T, name, usage string) {
	typ := fmt.Sprintf("%T", *new(T))
	bits, _ := strconv.Atoi(strings.TrimPrefix(typ, "uint"))
	parse := func(s string) (T, error) {
		v, err := strconv.ParseUint(s, 0, bits)
		return T(v), err
	}
	fl.Var(optional[T]{p, typ, parse}, name, usage)
}
