package intelpt

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDifferentialPTDump compares Dump with libipt's ptdump, byte for byte,
// on random streams (timing-heavy, with some corrupted bytes) and random
// option sets. ptdump is not packaged: build it from the intel/libipt
// sources outside this repository and set IOTAP_PTDUMP to its path.
func TestDifferentialPTDump(t *testing.T) {
	ptdump := os.Getenv("IOTAP_PTDUMP")
	if ptdump == "" {
		t.Skip("set IOTAP_PTDUMP to a ptdump binary built from intel/libipt to run this test")
	}
	r := rand.New(rand.NewPCG(11, 12))
	dir := t.TempDir()
	optSets := [][]string{
		{},
		{"--lastip", "--exec-mode", "--raw"},
		{"--no-sync", "--no-pad", "--no-offset"},
		{"--time", "--time-delta", "--mtc-freq", "3", "--cpuid-0x15.eax", "2", "--cpuid-0x15.ebx", "168", "--nom-freq", "24"},
		{"--time", "--mtc-freq", "0", "--cpuid-0x15.eax", "1", "--cpuid-0x15.ebx", "4"},
		{"--tcal", "--time-delta", "--mtc-freq", "4", "--cpuid-0x15.eax", "1", "--cpuid-0x15.ebx", "4"},
		{"--tcal", "--nom-freq", "8", "--mtc-freq", "9", "--cpuid-0x15.eax", "3", "--cpuid-0x15.ebx", "9"},
		{"--time", "--no-tcal", "--no-wall-clock", "--mtc-freq", "12", "--cpuid-0x15.eax", "2", "--cpuid-0x15.ebx", "1"},
		{"--time", "--keep-tcal-on-ovf", "--no-cyc", "--mtc-freq", "2", "--cpuid-0x15.eax", "1", "--cpuid-0x15.ebx", "3", "--nom-freq", "2"},
		{"--cpu", "6/78", "--time", "--time-delta", "--mtc-freq", "1", "--cpuid-0x15.eax", "1", "--cpuid-0x15.ebx", "2"},
		{"--cpu", "6/85", "--tcal", "--nom-freq", "3"},
		{"--cpu", "6/0x5f", "--no-timing"},
	}
	timing := []Kind{KindTSC, KindMTC, KindCYC, KindTMA, KindCBR, KindPSB, KindPSBEnd, KindOVF}
	for round := 0; round < 150; round++ {
		var e Encoder
		for i := 0; i < 300; i++ {
			var p Packet
			if r.IntN(3) > 0 {
				p = randomPacket(r, false)
				for p.Kind == KindTrig || p.Kind == KindCFE && p.Type == 11 {
					p = randomPacket(r, false)
				}
			} else {
				p = Packet{Kind: timing[r.IntN(len(timing))]}
				switch p.Kind {
				case KindTSC:
					p.Payload = uint64(r.IntN(1 << 20))
				case KindMTC:
					p.Payload = uint64(r.IntN(256))
				case KindCYC:
					p.Payload = uint64(r.IntN(1 << 12))
				case KindTMA:
					p.Payload, p.Aux = uint64(r.IntN(1<<16)), uint32(r.IntN(512))
				case KindCBR:
					p.Payload = uint64(r.IntN(64))
				}
			}
			e.Encode(p)
		}
		buf := bytes.Clone(e.Bytes())
		if round%3 == 0 { // corrupt a few bytes: errors and resyncs
			for i := 0; i < 3; i++ {
				buf[r.IntN(len(buf))] = byte(r.Uint32())
			}
		}
		f := filepath.Join(dir, fmt.Sprintf("r%d.pt", round))
		if err := os.WriteFile(f, buf, 0o600); err != nil {
			t.Fatal(err)
		}
		args := optSets[round%len(optSets)]
		want, err := exec.Command(ptdump, append(append([]string{}, args...), f)...).Output()
		if err != nil && len(want) == 0 {
			t.Fatalf("ptdump %v: %v", args, err)
		}
		cfg, opt, err := parsePTDumpArgs(args)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if _, err := Dump(&got, buf, cfg, opt); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			g, w := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
			for i := 0; i < len(g) && i < len(w); i++ {
				if g[i] != w[i] {
					t.Fatalf("round %d, ptdump %s %s: line %d:\n ours   %q\n ptdump %q", round, strings.Join(args, " "), f, i+1, g[i], w[i])
				}
			}
			t.Fatalf("round %d: %d lines from us, %d from ptdump", round, len(g), len(w))
		}
	}
}
