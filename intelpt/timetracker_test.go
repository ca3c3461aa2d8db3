package intelpt

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTimeTrackerMatchesDump: the tracker gives the TSC the dump prints
// with --time on every timing packet.
func TestTimeTrackerMatchesDump(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	timing := []Kind{KindTSC, KindMTC, KindCYC, KindTMA, KindCBR, KindPSB, KindPSBEnd, KindOVF, KindPad}
	cfg := Config{MTCFreq: 3, CPUID15EAX: 2, CPUID15EBX: 84, NomFreq: 24}
	tscCol := regexp.MustCompile(`^([0-9a-f]{16}) .* tsc +([0-9a-f]{16})$`)
	checked := 0
	for round := 0; round < 50; round++ {
		var e Encoder
		e.Encode(Packet{Kind: KindPSB})
		for i := 0; i < 400; i++ {
			p := Packet{Kind: timing[r.IntN(len(timing))]}
			switch p.Kind {
			case KindTSC:
				p.Payload = uint64(r.IntN(1 << 30))
			case KindMTC:
				p.Payload = uint64(r.IntN(256))
			case KindCYC:
				p.Payload = uint64(r.IntN(1 << 12))
			case KindTMA:
				p.Payload, p.Aux = uint64(r.IntN(1<<16)), uint32(r.IntN(512))
			case KindCBR:
				p.Payload = uint64(1 + r.IntN(60))
			}
			e.Encode(p)
		}
		var out bytes.Buffer
		Dump(&out, e.Bytes(), cfg, DumpOptions{Time: true})
		want := map[uint64]uint64{}
		for _, l := range strings.Split(out.String(), "\n") {
			if m := tscCol.FindStringSubmatch(l); m != nil {
				off, _ := strconv.ParseUint(m[1], 16, 64)
				v, _ := strconv.ParseUint(m[2], 16, 64)
				want[off] = v
			}
		}
		tt := NewTimeTracker(cfg)
		d := NewDecoder(e.Bytes(), cfg)
		var p Packet
		for {
			off := d.Offset()
			if d.Next(&p) != nil {
				break
			}
			tt.Update(&p)
			w, ok := want[uint64(off)]
			if !ok || p.Kind == KindCBR {
				continue
			}
			got, _ := tt.TSC()
			if got != w {
				t.Fatalf("round %d: %v at %#x: tracker %#x, dump %#x", round, p.Kind, off, got, w)
			}
			checked++
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d timing packets checked", checked)
	}
}
