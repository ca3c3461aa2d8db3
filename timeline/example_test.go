package timeline_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/iotap/iotap/regdb"
	"github.com/iotap/iotap/timeline"
	"github.com/iotap/iotap/usbmon"
)

func ExampleWriter() {
	var buf bytes.Buffer
	w := timeline.NewWriter(&buf)
	usb := w.Track(0, "USB", timeline.TrackOptions{})
	ep := w.Track(usb, "1:002 ep 1 IN bulk", timeline.TrackOptions{})
	w.Begin(ep, 1000, "usb", "bulk IN", timeline.Uint("length", 512))
	w.End(ep, 2500, timeline.Str("status", "OK"))
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}
	st := w.Stats()
	fmt.Println(st.Tracks, "tracks,", st.Slices, "slice,", st.Packets, "packets")
	// Output: 2 tracks, 1 slice, 5 packets
}

func ExampleExport() {
	st, err := timeline.Export(context.Background(), io.Discard,
		[]string{"../testdata/mmiotrace/e1000-probe.log"}, timeline.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	in := st.Inputs[0]
	fmt.Printf("%s: %d events, %d accesses, %d named, %d markers\n", in.Kind, in.Events, in.Accesses, in.Named, in.Markers)
	// Output: mmio: 11950 events, 11946 accesses, 11946 named, 2 markers
}

// heartbeat is a library user's own source: an instant every second on
// its own clock.
type heartbeat struct {
	in *timeline.InputStats
	n  int64
}

func (h *heartbeat) Info() *timeline.InputStats { return h.in }
func (h *heartbeat) Next() (int64, error) {
	if h.n == 3 {
		return 0, io.EOF
	}
	h.n++
	return h.n * 1e9, nil
}
func (h *heartbeat) Draw(c *timeline.Canvas, ts uint64) {
	c.W.Instant(c.Top, ts, "app", "beat", timeline.Int("n", h.n))
}
func (h *heartbeat) Flush(*timeline.Canvas, uint64)  {}
func (h *heartbeat) Finish(*timeline.Canvas, uint64) {}
func (h *heartbeat) Close() error                    { return nil }

func ExampleMerge() {
	f, err := os.Open("../testdata/usbmon/lab-0u.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	rd, _, err := usbmon.NewReader(f) // a live usbmon.Capture works the same
	if err != nil {
		fmt.Println(err)
		return
	}
	srcs := []timeline.Source{
		timeline.NewUSBSource("usb", rd),
		&heartbeat{in: &timeline.InputStats{Path: "app", Kind: "app", Clock: "app clock"}},
	}
	clocks := &timeline.Clocks{Sources: map[string]timeline.SourceClock{
		"usb": {OffsetNS: 0}, "app": {OffsetNS: 0}}}
	st, err := timeline.Merge(context.Background(), io.Discard, srcs, timeline.Options{Clocks: clocks})
	f.Close()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, in := range st.Inputs {
		fmt.Printf("%s: %d events, aligned %v\n", in.Kind, in.Events, in.Aligned)
	}
	// Output:
	// usb: 138 events, aligned true
	// app: 3 events, aligned true
}

// ExportSplit bounds every file it writes: the lab's e1000 probe log (about
// 1.5 MB of Perfetto detail) with a 400 KiB bound gives an overview and
// detail windows, each under the bound.
func ExampleExportSplit() {
	dir, err := os.MkdirTemp("", "split")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	out := dir + "/probe.pftrace"
	st, err := timeline.ExportSplit(context.Background(), out, []string{"../testdata/mmiotrace/e1000-probe.log"},
		timeline.Options{}, timeline.SplitOptions{MaxSize: 128 << 10})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("split:", st.Split, "windows:", len(st.Index.Windows), "in", timeline.DetailDir("probe.pftrace"))
	under := true
	for _, w := range st.Index.Windows {
		under = under && w.Bytes <= 128<<10
	}
	fmt.Println("every window under the bound:", under, "overview under it:", st.OverviewBytes <= 128<<10)
	// Output:
	// split: true windows: 6 in probe.d
	// every window under the bound: true overview under it: true
}

// Two live sources with the same name, each captured with its own clocks:
// Options.InputClocks gives each source its clock, whatever its name.
func ExampleOptions_inputClocks() {
	a := &heartbeat{in: &timeline.InputStats{Path: "app", Kind: "app"}}
	b := &heartbeat{in: &timeline.InputStats{Path: "app", Kind: "app"}}
	clk := func(off int64) *timeline.Clocks {
		return &timeline.Clocks{Sources: map[string]timeline.SourceClock{"app": {Clock: "mono", OffsetNS: off}}}
	}
	opt := timeline.Options{InputClocks: map[timeline.Source]*timeline.Clocks{a: clk(0), b: clk(5e8)}}
	st, err := timeline.Merge(context.Background(), io.Discard, []timeline.Source{a, b}, opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, in := range st.Inputs {
		fmt.Printf("%s: offset %d ns, first at %d ns\n", in.Path, in.OffsetNS, in.FirstNS)
	}
	// Output:
	// app: offset 0 ns, first at 1000000000 ns
	// app: offset 500000000 ns, first at 1500000000 ns
}

// The whole 'iotap timeline DIR -o FILE' job: a capture directory's traces
// and clocks, one Perfetto file (MaxSize 0), the summary table.
func ExampleExportFile() {
	inputs, clocksFile, err := timeline.ExpandInputs([]string{"../testdata/capture"})
	if err != nil {
		fmt.Println(err)
		return
	}
	clocks, err := timeline.LoadClocks(clocksFile)
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "timeline")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	res, err := timeline.ExportFile(context.Background(), inputs, timeline.Options{Clocks: clocks},
		timeline.FileOptions{Out: dir + "/cap.pftrace"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, in := range res.Inputs {
		fmt.Println(in.Kind, in.Events, "events, aligned:", in.Aligned)
	}
	fmt.Println("loss:", res.Loss())
	// Output:
	// events 4 events, aligned: true
	// mmio 12656 events, aligned: true
	// usb 12 events, aligned: true
	// loss: []
}

// --max-size's values: binary and decimal units.
func ExampleParseSize() {
	for _, s := range []string{"256MiB", "64K", "2GB"} {
		n, _ := timeline.ParseSize(s)
		fmt.Println(n, timeline.FormatSize(n))
	}
	// Output:
	// 268435456 256MiB
	// 65536 64KiB
	// 2000000000 1953125KiB
}

// The settings 'iotap timeline --db e1000 --clocks FILE' gives, loaded
// into the export's options.
func ExampleSettings() {
	s := timeline.Settings{DB: "e1000", Clocks: "../testdata/capture/clocks.json", BandwidthWindow: 50 * time.Millisecond}
	var opt timeline.Options
	if err := s.Apply(&opt); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(opt.DB != nil, opt.Clocks != nil, opt.BandwidthWindowNS)
	s.DB = "no-such-db"
	fmt.Println(errors.Is(s.Apply(&opt), regdb.ErrNotFound))
	// Output:
	// true true 50000000
	// true
}

// 'iotap timeline DIR ...' without --clocks takes the directory's
// clocks.json, and says so.
func ExampleSettings_ExpandInputs() {
	var s timeline.Settings
	inputs, clocks, err := s.ExpandInputs([]string{"../testdata/capture"})
	fmt.Println(len(inputs), clocks, s.Clocks, err)
	// Output:
	// 3 ../testdata/capture/clocks.json ../testdata/capture/clocks.json <nil>
}

// 'iotap timeline --bandwidth-window 0' is refused.
func ExampleSettings_Check() {
	fmt.Println((&timeline.Settings{BandwidthWindow: 0}).Check())
	fmt.Println((&timeline.Settings{BandwidthWindow: 100 * time.Millisecond}).Check())
	// Output:
	// --bandwidth-window must be positive
	// <nil>
}
