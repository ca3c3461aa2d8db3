package timeline

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"testing"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/usbmon"
)

// TestMergeAdaptersMatchExport merges the capture directory through the
// exported reader adapters (as a live capture or a library user would)
// and checks that the Perfetto trace is byte for byte the one Export
// writes from the files.
func TestMergeAdaptersMatchExport(t *testing.T) {
	const dir = "../testdata/capture/"
	clocks, err := LoadClocks(dir + "clocks.json")
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{dir + "usb.pcapng", dir + "mmio.log.zst", dir + "events.ndjson"}
	var want bytes.Buffer
	wst, err := Export(context.Background(), &want, paths, Options{Clocks: clocks})
	if err != nil {
		t.Fatal(err)
	}

	open := func(p string) *os.File {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	rd, _, err := usbmon.NewReader(bufio.NewReader(open(paths[0])))
	if err != nil {
		t.Fatal(err)
	}
	srcs := []Source{
		NewUSBSource(paths[0], rd),
		NewMMIOSource(paths[1], mmiotrace.NewReader(open(paths[1])), nil),
		NewEventsSource(paths[2], open(paths[2])),
	}
	var got bytes.Buffer
	gst, err := Merge(context.Background(), &got, srcs, Options{Clocks: clocks})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("Merge wrote %d bytes, Export %d: traces differ", got.Len(), want.Len())
	}
	for i := range wst.Inputs {
		w, g := *wst.Inputs[i], *gst.Inputs[i]
		if w.BytesRead == 0 {
			t.Errorf("input %d: Export counts no bytes read", i)
		}
		w.BytesRead = 0 // the adapters read what the caller opened
		if w != g {
			t.Errorf("input %d: Merge %+v, Export %+v", i, g, w)
		}
	}
	if wst.Inputs[1].Events == 0 || !gst.Aligned {
		t.Errorf("nothing merged or not aligned: %+v", gst)
	}
}

// countSource is a source of n events at 1, 2, ... ms on its own clock.
type countSource struct {
	in   *InputStats
	i, n int64
}

func (s *countSource) Info() *InputStats { return s.in }
func (s *countSource) Next() (int64, error) {
	if s.i == s.n {
		return 0, io.EOF
	}
	s.i++
	return s.i * 1e6, nil
}
func (s *countSource) Draw(c *Canvas, ts uint64) { c.W.Instant(c.Top, ts, "t", "e") }
func (s *countSource) Flush(*Canvas, uint64)     {}
func (s *countSource) Finish(*Canvas, uint64)    {}
func (s *countSource) Close() error              { return nil }

// TestInputClocksBySource: InputClocks is keyed by the source, so two
// sources of one name (two live captures' "usb") take their own clocks,
// a source missing from it takes Clocks, and FileClocks (by path) is
// overridden by InputClocks.
func TestInputClocksBySource(t *testing.T) {
	clk := func(off int64, marker string) *Clocks {
		return &Clocks{Sources: map[string]SourceClock{"usb": {Clock: "c" + marker, OffsetNS: off}},
			Markers: []Marker{{Name: marker, NS: off}}}
	}
	a := &countSource{in: &InputStats{Path: "usb", Kind: KindUSB}, n: 2}
	b := &countSource{in: &InputStats{Path: "usb", Kind: KindUSB}, n: 2}
	c := &countSource{in: &InputStats{Path: "usb", Kind: KindUSB}, n: 2}
	d := &countSource{in: &InputStats{Path: "file", Kind: KindUSB}, n: 2}
	opt := Options{
		Clocks:      clk(7e9, "global"),
		InputClocks: map[Source]*Clocks{a: clk(1e9, "a"), b: clk(3e9, "b"), d: clk(4e9, "d")},
		FileClocks: func(p string) *Clocks {
			if p == "file" {
				return clk(9e9, "file")
			}
			return nil
		},
	}
	st, err := Merge(context.Background(), io.Discard, []Source{a, b, c, d}, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		off   int64
		clock string
	}{{1e9, "ca"}, {3e9, "cb"}, {7e9, "cglobal"}, {4e9, "cd"}}
	for i, w := range want {
		in := st.Inputs[i]
		if in.OffsetNS != w.off || in.Clock != w.clock || !in.Aligned {
			t.Errorf("source %d: offset %d clock %q aligned %v, want %d %q", i, in.OffsetNS, in.Clock, in.Aligned, w.off, w.clock)
		}
	}
	// The markers of every clocks file in use (a, b, global, d; not
	// file's, which d's own replaces) are shown once each.
	if st.Markers != 4 {
		t.Errorf("%d markers, want 4", st.Markers)
	}
	// FileClocks alone gives the source of that path its clocks.
	e := &countSource{in: &InputStats{Path: "file", Kind: KindUSB}, n: 1}
	st, err = Merge(context.Background(), io.Discard, []Source{e}, Options{FileClocks: opt.FileClocks})
	if err != nil {
		t.Fatal(err)
	}
	if in := st.Inputs[0]; in.OffsetNS != 9e9 || in.Clock != "cfile" {
		t.Errorf("FileClocks: offset %d clock %q, want 9e9 cfile", in.OffsetNS, in.Clock)
	}
}
