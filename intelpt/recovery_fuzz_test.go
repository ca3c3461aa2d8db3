package intelpt

import (
	"bytes"
	"reflect"
	"testing"
	"testing/iotest"
)

// recoveryTrace is a valid trace of n PSB+ sections with a few packets
// each; it returns the bytes and the offset where each packet starts.
func recoveryTrace(n int) ([]byte, []int) {
	var e Encoder
	var offs []int
	for i := 0; i < n; i++ {
		for _, p := range []Packet{
			{Kind: KindPSB}, {Kind: KindTSC, Payload: uint64(1000 + 100*i)}, {Kind: KindCBR, Payload: 0x24},
			{Kind: KindFUP, IPC: IPCFull, Payload: 0xffffffffffff1000}, {Kind: KindPSBEnd},
			{Kind: KindTNT8, Bits: 5, Payload: 0x11}, {Kind: KindTIP, IPC: IPCUpdate16, Payload: 0x1234},
			{Kind: KindMTC, Payload: uint64(i)}, {Kind: KindCYC, Payload: 0x20}, {Kind: KindPad},
			{Kind: KindTIP, IPC: IPCSext48, Payload: 0xffffffff1000}, {Kind: KindTNT64, Bits: 47, Payload: 0x7fff00001234},
		} {
			offs = append(offs, len(e.Bytes()))
			e.Encode(p)
		}
	}
	return e.Bytes(), offs
}

// FuzzStatsResync: garbage spliced into a valid trace at a packet
// boundary. The statistics (pt stats, the report) decode the valid part
// before it exactly, count every decoding error with its offset, at or
// after the garbage, resynchronise at a PSB after it — missing at most the first
// PSB after the garbage, which a garbage packet may overlap — and the
// stream decoder (constant memory, any read sizes) recovers exactly as
// the slice decoder does. The oracle is the clean trace's own structure.
func FuzzStatsResync(f *testing.F) {
	f.Add([]byte{0xff, 0xff, 0xff}, uint8(13))
	f.Add([]byte{0x02, 0x82, 0x02, 0x82}, uint8(24))          // half a PSB
	f.Add([]byte{0x02, 0xc3, 0x88}, uint8(30))                // a cut MNT
	f.Add([]byte{0x19, 1, 2}, uint8(5))                       // a TSC cut short: eats the next packet
	f.Add(bytes.Repeat([]byte{0x02, 0x82}, 8), uint8(40))     // a whole PSB in the garbage
	f.Add([]byte{0x02, 0xf3, 0x02, 0xf3, 0x99}, uint8(0))     // garbage first: OVFs and an unknown packet
	f.Add([]byte{0x4d, 1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(50)) // a TIP with a full IP over the next PSB
	f.Fuzz(func(t *testing.T, garbage []byte, at uint8) {
		const sections = 6
		clean, offs := recoveryTrace(sections)
		perSection := len(offs) / sections
		k := int(at) % (len(offs) + 1)
		gStart := len(clean)
		if k < len(offs) {
			gStart = offs[k]
		}
		in := append(append(append([]byte{}, clean[:gStart]...), garbage...), clean[gStart:]...)
		gEnd := gStart + len(garbage)
		// PSBs of the clean trace before and after the splice.
		before := (k + perSection - 1) / perSection
		after := sections - before

		s := ComputeStats(in, Config{})
		if s.Bytes != int64(len(in)) || s.SkippedBytes < 0 || s.SkippedBytes > s.Bytes {
			t.Fatalf("bytes %d, skipped %d, input %d", s.Bytes, s.SkippedBytes, len(in))
		}
		for _, off := range s.ErrorOffsets {
			if off < int64(gStart) || off >= int64(len(in)) {
				t.Fatalf("decoding error at %d, outside the garbage and what follows [%d, %d)", off, gStart, len(in))
			}
		}
		if s.Errors != int64(len(s.ErrorOffsets)) && len(s.ErrorOffsets) < maxErrorOffsets {
			t.Fatalf("%d errors, %d offsets", s.Errors, len(s.ErrorOffsets))
		}
		if k > 0 && int64(before+after-1) > s.PSBs {
			t.Fatalf("%d PSBs decoded; the clean trace has %d before the garbage [%d, %d) and %d after", s.PSBs, before, gStart, gEnd, after)
		}
		if k == 0 && int64(after-1) > s.PSBs {
			t.Fatalf("%d PSBs decoded after leading garbage, want at least %d", s.PSBs, after-1)
		}
		if k > perSection && s.Count(KindPSBEnd) < int64(before-1) {
			t.Fatalf("%d PSBENDs before the garbage, want %d", s.Count(KindPSBEnd), before-1)
		}
		r, err := ComputeStatsReader(iotest.HalfReader(bytes.NewReader(in)), Config{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r, s) {
			t.Fatalf("stream decoder recovers differently:\n got %+v\nwant %+v", r, s)
		}
	})
}
