package timeline

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	src := w.Track(0, "USB", TrackOptions{Ordered: true})
	ep := w.Track(src, "1:002 ep 1 IN", TrackOptions{Rank: 2})
	bw := w.Track(src, "1:002 bandwidth", TrackOptions{Counter: true, Unit: UnitSizeBytes, UnitName: "B/s"})
	w.Begin(ep, 1000, "usb", "Bulk IN", Uint("length", 512), Str("request", "READ(10)"))
	w.Instant(ep, 1500, "marker", "start", Bytes("text", []byte("hello")), Bool("ok", true), Int("status", -32), Double("f", 1.5), Hex("h", 0xfebc0008), Hex("z", 0), Interned("d", "STATUS {LU}"))
	w.End(ep, 2000, Int("status", 0), Interned("d", "STATUS {LU}"))
	w.Begin(ep, 3000, "usb", "Bulk IN")
	w.End(ep, 4000)
	w.Counter(bw, 4000, 128e3)
	w.DataLost()
	w.Instant(ep, 5000, "usb", "Bulk IN", Str("request", "after the loss"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if st.Tracks != 3 || st.Slices != 2 || st.Ends != 2 || st.Instants != 2 || st.Counters != 1 {
		t.Errorf("stats %+v", st)
	}
	if st.Bytes != int64(buf.Len()) {
		t.Errorf("stats bytes %d, wrote %d", st.Bytes, buf.Len())
	}

	tr := decodeTrace(t, buf.Bytes())
	if !tr.cleared {
		t.Error("first packet does not clear the incremental state")
	}
	if len(tr.tracks) != 3 || tr.path(ep) != "USB/1:002 ep 1 IN" || !tr.tracks[bw].counter {
		t.Errorf("tracks: %v", tr.order)
	}
	if tr.count(typeSliceBegin) != 2 || tr.count(typeSliceEnd) != 2 || tr.count(typeInstant) != 2 || tr.count(typeCounter) != 1 {
		t.Errorf("events: %+v", tr.events)
	}
	checkSlicesNest(t, tr)
	e := tr.events[0]
	if e.ts != 1000 || e.name != "Bulk IN" || e.cat != "usb" || e.args["length"] != uint64(512) || e.args["request"] != "READ(10)" {
		t.Errorf("first event %+v", e)
	}
	i := tr.events[1]
	if i.args["text"] != "hello" || i.args["ok"] != true || i.args["status"] != int64(-32) || i.args["f"] != 1.5 || i.args["h"] != "0xfebc0008" || i.args["z"] != "0x0" || i.args["d"] != "STATUS {LU}" {
		t.Errorf("instant args %+v", i.args)
	}
	if tr.events[3].name != "Bulk IN" {
		t.Errorf("interned name not reused: %+v", tr.events[3])
	}
	if c := tr.events[5]; c.value != 128e3 || c.track != bw {
		t.Errorf("counter %+v", c)
	}
	if tr.lostMark != 1 {
		t.Errorf("data loss marks %d", tr.lostMark)
	}
	if last := tr.events[len(tr.events)-1]; last.name != "Bulk IN" || last.cat != "usb" || last.args["request"] != "after the loss" {
		t.Errorf("event after the data loss: %+v", last)
	}
	if e := tr.events[2]; e.args["d"] != "STATUS {LU}" {
		t.Errorf("slice end args %+v", e.args)
	}
	// "Bulk IN", "start"; "usb", "marker"; length, request, text, ok,
	// status, f, h, z, d; the value "STATUS {LU}" once; after the loss
	// again "Bulk IN", "usb", "request"
	if st.Interned != 17 {
		t.Errorf("interned %d strings, want 17", st.Interned)
	}

	text := protocDecode(t, buf.Bytes())
	for _, want := range []string{
		"type: TYPE_SLICE_BEGIN", "type: TYPE_SLICE_END", "type: TYPE_INSTANT", "type: TYPE_COUNTER",
		"sequence_flags: 1", "sequence_flags: 2", "first_packet_on_sequence: true", "trusted_packet_sequence_id: 1",
		`name: "1:002 ep 1 IN"`, "unit: UNIT_SIZE_BYTES", `unit_name: "B/s"`, "child_ordering: EXPLICIT",
		"double_counter_value: 128000", `string_value: "READ(10)"`, "int_value: -32", "previous_packet_dropped: 1",
		"pointer_value: 4273733640", "string_value_iid: 1", `debug_annotation_string_values {`, `str: "STATUS {LU}"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("protoc output lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "type: TYPE_SLICE_BEGIN"); n != 2 {
		t.Errorf("protoc sees %d slice begins, want 2", n)
	}
	if n := strings.Count(text, "track_descriptor {"); n != 3 {
		t.Errorf("protoc sees %d track descriptors, want 3", n)
	}
	if m := regexp.MustCompile(`(?m)^\s*\d+:`).FindString(text); m != "" {
		t.Errorf("protoc found fields unknown to Perfetto's proto: %q", m)
	}
}

func TestWriterInternTableFull(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	tr0 := w.Track(0, "t", TrackOptions{})
	for i := 0; i < MaxInterned+10; i++ {
		w.Instant(tr0, uint64(i), "", "n"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+itoa(i))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := w.Stats().Interned; got != MaxInterned {
		t.Errorf("interned %d, want the cap %d", got, MaxInterned)
	}
	tr := decodeTrace(t, buf.Bytes())
	last := tr.events[len(tr.events)-1]
	if !strings.HasSuffix(last.name, itoa(MaxInterned+9)) {
		t.Errorf("inline name after the cap: %q", last.name)
	}
}

type failWriter struct{}

func (f *failWriter) Write(p []byte) (int, error) {
	return 0, errFail
}

var errFail = bytes.ErrTooLarge

func TestWriterStickyError(t *testing.T) {
	w := NewWriter(&failWriter{})
	tr := w.Track(0, "t", TrackOptions{})
	for i := 0; i < 100000; i++ {
		w.Instant(tr, uint64(i), "c", "n", Str("a", "some text to fill the buffer"))
	}
	if err := w.Close(); err == nil {
		t.Fatal("no error from a failing writer")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestWriterNoAllocs(t *testing.T) {
	w := NewWriter(io.Discard)
	tr := w.Track(0, "t", TrackOptions{})
	args := []Arg{Hex("offset", 0xd8), Uint("width", 4), Bytes("decoded", []byte("{TXDW}"))}
	w.Instant(tr, 1, "mmio", "W IMC", args...)
	allocs := testing.AllocsPerRun(1000, func() {
		w.Instant(tr, 2, "mmio", "W IMC", args...)
		w.Begin(tr, 3, "usb", "bulk IN", args...)
		w.End(tr, 4)
		w.Counter(tr, 5, 1.5)
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per event group, want 0", allocs)
	}
}

func BenchmarkWriterInstant(b *testing.B) {
	w := NewWriter(io.Discard)
	tr := w.Track(0, "t", TrackOptions{})
	args := []Arg{Hex("offset", 0xd8), Hex("value", 0xffffffff), Uint("width", 4), Bytes("decoded", []byte("{TXDW, TXQE}"))}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.Instant(tr, uint64(i), "mmio", "W IMC", args...)
	}
}
