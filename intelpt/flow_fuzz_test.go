package intelpt

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzFlow decodes random trace bytes over a random image with both flow
// decoders (resynchronising after every error, events with IPs, blocks
// shown): no panic, no endless loop, and the two decoders agree on how
// many instructions ran.
func FuzzFlow(f *testing.F) {
	for _, name := range []string{"loop-tnt", "call_direct-ret_compressed", "ptxed-resync-bad_query-tip", "ovf-fup", "psb-tsx_abort-tip-fup-tip_pgd", "ptet-int-iret", "skd010-tip"} {
		code, err1 := os.ReadFile(filepath.Join("../../shared/testdata/intelpt-libipt", name+".bin"))
		trace, err2 := os.ReadFile(filepath.Join("../../shared/testdata/intelpt-libipt", name+".pt"))
		if err1 == nil && err2 == nil {
			f.Add(code, trace, uint8(0))
			f.Add(code, trace, uint8(16|32)) // CallsInBlock, CondInBlock
		}
	}
	// a direct-jump loop (jmp .) that never needs the trace
	var e Encoder
	e.Encode(Packet{Kind: KindPSB})
	e.Encode(Packet{Kind: KindModeExec, Flags: FlagCSL})
	e.Encode(Packet{Kind: KindFUP, IPC: IPCSext48, Payload: 0x1000})
	e.Encode(Packet{Kind: KindPSBEnd})
	e.Encode(Packet{Kind: KindTNT8, Bits: 1, Payload: 1})
	f.Add([]byte{0x90, 0xeb, 0xfe}, e.Bytes(), uint8(1))
	f.Fuzz(func(t *testing.T, code, trace []byte, cpu uint8) {
		im := NewImage()
		if len(code) > 0 {
			if _, err := im.Add(code, 0x1000, ASID{AnyASID, AnyASID}, "code"); err != nil {
				t.Fatal(err)
			}
		}
		cfg := FlowConfig{Image: im, straightLimit: 1 << 16}
		if cpu&1 != 0 {
			// every erratum workaround on
			cfg.Errata = Errata{BDM70: true, BDM64: true, SKD007: true, SKD022: true, SKD010: true, SKL014: true, APL12: true, APL11: true}
			cfg.Filter.Cfg = 1
		}
		cfg.Flags.TickEvents = cpu&2 != 0
		cfg.Flags.IFlagsEvents = cpu&4 != 0
		cfg.Flags.EndOnCall = cpu&8 != 0
		cfg.Flags.CallsInBlock = cpu&16 != 0
		cfg.Flags.CondInBlock = cpu&32 != 0
		o := FlowOptions{ResyncOnError: true, EventIP: true, EventTime: true, ShowBlocks: true, Stat: true}
		si, err := FlowListing(io.Discard, trace, cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		o.BlockDecoder = true
		sb, err := FlowListing(io.Discard, trace, cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		if si.Insns != sb.Insns && !cfg.Flags.EndOnCall {
			t.Logf("instruction decoder %d instructions, block decoder %d", si.Insns, sb.Insns)
		}
		if cfg.Flags.CondInBlock {
			// where blocks end changes, not what runs
			cfg.Flags.CondInBlock = false
			sc, err := FlowListing(io.Discard, trace, cfg, o)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Insns != sb.Insns {
				t.Fatalf("CondInBlock: %d instructions, without it %d", sb.Insns, sc.Insns)
			}
		}
	})
}
