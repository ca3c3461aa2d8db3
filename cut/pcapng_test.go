package cut

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// bigPcapng repeats the packets of the lab capture (18.7 s) copies times,
// copy c shifted by c*20 s, with an interface statistics block after each copy
// whose isb_ifdrop grows by 5.
func bigPcapng(t testing.TB, copies int) []byte {
	data, err := os.ReadFile(pcapngCap)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	var head, pkts [][]byte
	resol := uint64(1e6)
	for off := 0; off+12 <= len(data); {
		typ, n := le.Uint32(data[off:]), int(le.Uint32(data[off+4:]))
		blk := data[off : off+n]
		switch typ {
		case 0x0a0d0d0a, 1:
			head = append(head, blk)
			if typ == 1 && bytes.Contains(blk, []byte{9, 0, 1, 0, 9}) {
				resol = 1e9
			}
		case 6:
			pkts = append(pkts, blk)
		}
		off += n
	}
	var b bytes.Buffer
	for _, h := range head {
		b.Write(h)
	}
	var last uint64
	for c := 0; c < copies; c++ {
		for _, p := range pkts {
			q := bytes.Clone(p)
			ts := uint64(le.Uint32(q[12:]))<<32 | uint64(le.Uint32(q[16:]))
			ts += uint64(c) * 20 * resol
			le.PutUint32(q[12:], uint32(ts>>32))
			le.PutUint32(q[16:], uint32(ts))
			b.Write(q)
			last = ts
		}
		isb := make([]byte, 0, 36)
		isb = le.AppendUint32(isb, 5)
		isb = le.AppendUint32(isb, 36)
		isb = le.AppendUint32(isb, 0)
		isb = le.AppendUint32(isb, uint32(last>>32))
		isb = le.AppendUint32(isb, uint32(last))
		isb = le.AppendUint16(isb, 5)
		isb = le.AppendUint16(isb, 8)
		isb = le.AppendUint64(isb, uint64(5*(c+1)))
		isb = le.AppendUint32(isb, 36)
		b.Write(isb)
	}
	return b.Bytes()
}

func TestIndexPcapng(t *testing.T) {
	data := bigPcapng(t, 40) // ~4.6 MB over ~800 s
	in := Input{Name: "big.pcapng", ReaderAt: bytes.NewReader(data), Size: int64(len(data))}
	ix, err := BuildIndex(t.Context(), in, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range [][2]string{{"107", "108"}, {"105", "145"}, {"", "0.5"}, {"785", ""}, {"1000", "1001"}} {
		want, wres := doCut(t, in, w[0], w[1])
		cr := &countingReaderAt{r: bytes.NewReader(data)}
		got, gres := doCut(t, Input{Name: "big.pcapng", ReaderAt: cr, Size: int64(len(data)), Index: ix}, w[0], w[1])
		if !bytes.Equal(got, want) || !gres.Indexed {
			t.Errorf("%s..%s: indexed cut differs (%d vs %d bytes)", w[0], w[1], len(got), len(want))
		}
		if gres.Lost != wres.Lost {
			t.Errorf("%s..%s: lost %d indexed, %d not", w[0], w[1], gres.Lost, wres.Lost)
		}
		if limit := int64(len(want)) + 2*ix.Interval + headLen + 3*hashLen; cr.n.Load() > limit && w[0] != "" && w[1] != "" {
			t.Errorf("%s..%s: read %d bytes for a %d-byte cut", w[0], w[1], cr.n.Load(), len(want))
		}
	}
	// [105, 145) holds the statistics blocks of copies 5 and 6 (at 118.7
	// and 138.7 s): the drops inside the window are 2*5, relative to the
	// block of copy 4.
	_, res := doCut(t, in, "105", "145")
	if res.Lost != 10 {
		t.Errorf("drops in [105, 145): %d, want 10", res.Lost)
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		return
	}
	out, _ := doCut(t, Input{Name: "big.pcapng", ReaderAt: bytes.NewReader(data), Size: int64(len(data)), Index: ix}, "105", "145")
	p := writeTemp(t, "w.pcapng", out)
	// tshark's own count of the drops in the cut: the interface
	// statistics of the last ISB (capinfos would print the same).
	if got := run(t, "tshark", "-r", p, "-q", "-z", "io,stat,0"); !strings.Contains(got, "|") {
		t.Errorf("tshark cannot read the cut: %s", got)
	}
	all := writeTemp(t, "all.pcapng", data)
	want := run(t, "tshark", "-r", all, "-Y", "frame.time_relative >= 105 && frame.time_relative < 145", "-T", "fields", "-e", "frame.time_epoch", "-e", "usb.urb_id")
	got := run(t, "tshark", "-r", p, "-T", "fields", "-e", "frame.time_epoch", "-e", "usb.urb_id")
	if got != want || got == "" {
		t.Errorf("cut of [105, 145): %d packets, tshark selects %d", strings.Count(got, "\n"), strings.Count(want, "\n"))
	}
}
