package intelpt

import (
	"fmt"
	"strconv"
	"strings"
)

// CPU identifies an Intel processor by family, model and stepping. The zero
// value means "no particular CPU": decode by the specification.
type CPU struct {
	Family   uint16
	Model    uint8
	Stepping uint8
}

// ParseCPU parses "family/model[/stepping]" (decimal, 0x hex or 0 octal, like
// ptdump's --cpu). "none" or "" gives the zero CPU.
func ParseCPU(s string) (CPU, error) {
	if s == "" || s == "none" {
		return CPU{}, nil
	}
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return CPU{}, fmt.Errorf("intelpt: cpu %q: want family/model[/stepping]", s)
	}
	var v [3]uint64
	limits := [3]int{16, 8, 8}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 0, limits[i])
		if err != nil {
			return CPU{}, fmt.Errorf("intelpt: cpu %q: want family/model[/stepping]", s)
		}
		v[i] = n
	}
	return CPU{Family: uint16(v[0]), Model: uint8(v[1]), Stepping: uint8(v[2])}, nil
}

// Errata are the processor errata the decoders work around.
type Errata struct {
	BDM70, BDM64, SKD007, SKD022, SKD010, SKL014, APL12, APL11, SKL168, SKZ84 bool
}

// ErrataFor returns the known errata of cpu. ok is false when the CPU is not
// known (the zero CPU included); the errata are then all clear.
func ErrataFor(cpu CPU) (e Errata, ok bool) {
	switch cpu.Family {
	case 0x6:
		switch cpu.Model {
		case 0x3d, 0x47, 0x4f, 0x56:
			return Errata{BDM70: true, BDM64: true}, true
		case 0x4e, 0x5e, 0x8e, 0x9e, 0xa5, 0xa6:
			return Errata{BDM70: true, SKD007: true, SKD022: true, SKD010: true, SKL014: true, SKL168: true}, true
		case 0x55, 0x6a, 0x6c:
			return Errata{BDM70: true, SKL014: true, SKD022: true, SKZ84: true}, true
		case 0x8f, 0xcf, 0xad, 0xae:
			return Errata{BDM70: true, SKD022: true, SKZ84: true}, true
		case 0x66, 0x7d, 0x7e, 0x8c, 0x8d, 0xa7, 0xa8:
			return Errata{BDM70: true, SKL014: true, SKD022: true}, true
		case 0x97, 0x9a, 0xba, 0xb7, 0xbf, 0xc5, 0xc6, 0xb5, 0xaa, 0xac, 0xbd, 0xcc, 0xd5:
			return Errata{BDM70: true, SKD022: true, APL11: true}, true
		case 0x5c, 0x5f:
			return Errata{APL12: true, APL11: true}, true
		case 0x7a, 0x86, 0x96, 0x9c, 0xb6, 0xaf, 0xdd:
			return Errata{APL11: true}, true
		}
	case 0x12:
		switch cpu.Model {
		case 0x01, 0x03:
			return Errata{BDM70: true, SKD022: true, APL11: true}, true
		}
	case 0x13:
		if cpu.Model == 0x01 {
			return Errata{BDM70: true, SKD022: true, SKZ84: true}, true
		}
	}
	return Errata{}, false
}

// Config describes how a trace was recorded. The zero value decodes by the
// specification with no timing calibration.
type Config struct {
	Errata Errata // errata to work around (see ErrataFor)
	// MTCFreq is IA32_RTIT_CTL.MTCFreq (bits 17:14): MTC every 2^MTCFreq CTC ticks.
	MTCFreq uint8
	// NomFreq is the nominal core:bus ratio (MSR_PLATFORM_INFO[15:8]).
	NomFreq uint8
	// CPUID15EAX and CPUID15EBX are CPUID leaf 0x15: TSC/crystal clock ratio
	// (EBX/EAX), needed to turn MTC/TMA crystal ticks into TSC ticks.
	CPUID15EAX, CPUID15EBX uint32
	// IgnoreBlocks makes the decoder treat the block packets BBP, BIP and
	// BEP (PEBS via PT, event trace) as unknown opcodes, as libipt does.
	IgnoreBlocks bool
}

// Timing are timing parameters given by hand, each overriding what the
// trace recorded (perf.data's AUXTRACE_INFO, capture.json) when set:
// ptdump's and ptxed's --mtc-freq, --nom-freq, --cpuid-0x15.eax/ebx.
type Timing struct {
	MTCFreq, NomFreq       *uint8
	CPUID15EAX, CPUID15EBX *uint32
}

// Apply returns base with the parameters set in t.
func (t *Timing) Apply(base Config) Config {
	if t.MTCFreq != nil {
		base.MTCFreq = *t.MTCFreq
	}
	if t.NomFreq != nil {
		base.NomFreq = *t.NomFreq
	}
	if t.CPUID15EAX != nil {
		base.CPUID15EAX = *t.CPUID15EAX
	}
	if t.CPUID15EBX != nil {
		base.CPUID15EBX = *t.CPUID15EBX
	}
	return base
}
