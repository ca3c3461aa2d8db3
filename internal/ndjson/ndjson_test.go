package ndjson

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"testing"
)

// decode parses one line with encoding/json, numbers kept as text.
func decode(t *testing.T, line []byte) map[string]any {
	t.Helper()
	if !json.Valid(line) {
		t.Fatalf("not JSON: %q", line)
	}
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return m
}

// viaEncodingJSON is what encoding/json makes of s after a round trip:
// the oracle for the escaping of strings (invalid UTF-8 included).
func viaEncodingJSON(t *testing.T, s string) string {
	t.Helper()
	j, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back string
	if err := json.Unmarshal(j, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

func TestRecord(t *testing.T) {
	var b []byte
	b = Input(b, "usb", "a \"b\".pcapng", "usbmon pcapng", "")
	b = End(b)
	b = Begin(b, "usb_event")
	b = Uint(b, "seq", math.MaxUint64)
	b = Int(b, "ts_ns", math.MinInt64)
	b = Null(b, "latency_ns")
	b = Hex(b, "data", []byte{0, 0xab, 0xff})
	b = HexUint(b, "urb_id", 0xffff8d7e73bfa900)
	b = Bool(b, "synthesized", true)
	b = Float(b, "rate", 0.1)
	b = Float(b, "nan", math.NaN())
	b = Open(b, "latency")
	b = Int(b, "count", 0)
	b = Close(b)
	b = OpenArray(b, "fields")
	b = OpenElem(b)
	b = Str(b, "name", "FD")
	b = Close(b)
	b = OpenElem(b)
	b = Close(b)
	b = StrElem(b, "x")
	b = IntElem(b, -3)
	b = CloseArray(b)
	b = Bytes(b, "text", []byte("tab\there\x01"))
	b = End(b)
	want := `{"kind":"input","schema":1,"source":"usb","file":"a \"b\".pcapng","format":"usbmon pcapng","clock":null}
{"kind":"usb_event","seq":18446744073709551615,"ts_ns":-9223372036854775808,"latency_ns":null,"data":"00abff","urb_id":"0xffff8d7e73bfa900","synthesized":true,"rate":0.1,"nan":null,"latency":{"count":0},"fields":[{"name":"FD"},{},"x",-3],"text":"tab\there\u0001"}
`
	if string(b) != want {
		t.Fatalf("got\n%s\nwant\n%s", b, want)
	}
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) > 0 {
			decode(t, line)
		}
	}
}

// TestFloatLikeEncodingJSON: numbers are written as encoding/json writes
// them (the same shortest form, the same switch to exponents).
func TestFloatLikeEncodingJSON(t *testing.T) {
	for _, v := range []float64{0, 1, -1, 0.1, 1e-6, 9.99e-7, 1e20, 1e21, 123456.789, math.MaxFloat64, math.SmallestNonzeroFloat64, 13.452321609136817} {
		j, _ := json.Marshal(v)
		if got := AppendFloat(nil, v); string(got) != string(j) {
			t.Errorf("%v: got %s, encoding/json %s", v, got, j)
		}
	}
}

// FuzzRecord: every record built of arbitrary values is one line that
// encoding/json parses, and every value reads back as written.
func FuzzRecord(f *testing.F) {
	f.Add("plain", []byte{1, 2}, int64(-5), uint64(7), 0.25, true)
	f.Add("quote\" back\\ nl\n \x00 \x7f é \xff\xfe \u2028", []byte{}, int64(math.MinInt64), uint64(math.MaxUint64), math.Inf(1), false)
	f.Add("", []byte("\xc3"), int64(0), uint64(0), math.Copysign(0, -1), false)
	f.Fuzz(func(t *testing.T, s string, p []byte, i int64, u uint64, fl float64, bo bool) {
		var b []byte
		b = Begin(b, "fuzz")
		b = Str(b, "s", s)
		b = Bytes(b, "p", p)
		b = Hex(b, "h", p)
		b = Int(b, "i", i)
		b = Uint(b, "u", u)
		b = Float(b, "f", fl)
		b = Bool(b, "b", bo)
		b = HexUint(b, "x", u)
		b = OpenArray(b, "a")
		b = StrElem(b, s)
		b = IntElem(b, i)
		b = CloseArray(b)
		b = End(b)
		if bytes.Count(b, []byte("\n")) != 1 || b[len(b)-1] != '\n' {
			t.Fatalf("not one line: %q", b)
		}
		m := decode(t, b)
		if got, want := m["s"], viaEncodingJSON(t, s); got != want {
			t.Errorf("s %q, want %q", got, want)
		}
		if got, want := m["p"], viaEncodingJSON(t, string(p)); got != want {
			t.Errorf("p %q, want %q", got, want)
		}
		hx := ""
		for _, c := range p {
			hx += strconv.FormatUint(uint64(c>>4), 16) + strconv.FormatUint(uint64(c&15), 16)
		}
		if m["h"] != hx {
			t.Errorf("h %v, want %s", m["h"], hx)
		}
		if got := m["i"].(json.Number).String(); got != strconv.FormatInt(i, 10) {
			t.Errorf("i %s, want %d", got, i)
		}
		if got := m["u"].(json.Number).String(); got != strconv.FormatUint(u, 10) {
			t.Errorf("u %s, want %d", got, u)
		}
		if math.IsNaN(fl) || math.IsInf(fl, 0) {
			if m["f"] != nil {
				t.Errorf("f %v, want null", m["f"])
			}
		} else if got, err := m["f"].(json.Number).Float64(); err != nil || got != fl {
			t.Errorf("f %v (%v), want %v", got, err, fl)
		}
		if m["b"] != bo {
			t.Errorf("b %v, want %v", m["b"], bo)
		}
		if got, err := strconv.ParseUint(m["x"].(string)[2:], 16, 64); err != nil || got != u {
			t.Errorf("x %v, want %#x", m["x"], u)
		}
		a := m["a"].([]any)
		if len(a) != 2 || a[0] != viaEncodingJSON(t, s) || a[1].(json.Number).String() != strconv.FormatInt(i, 10) {
			t.Errorf("a %v", a)
		}
	})
}

// TestWriterNoAllocs: once the buffer has grown, a record costs no
// allocation.
func TestWriterNoAllocs(t *testing.T) {
	w := NewWriter(io.Discard)
	data := []byte{1, 2, 3, 4}
	allocs := testing.AllocsPerRun(1000, func() {
		w.B = Begin(w.B, "usb_event")
		w.B = Uint(w.B, "seq", 12345)
		w.B = Int(w.B, "ts_ns", 1750417432438355000)
		w.B = Str(w.B, "transfer", "bulk")
		w.B = Hex(w.B, "data", data)
		w.B = HexUint(w.B, "urb_id", 0xffff8d7e73bfa900)
		w.B = Null(w.B, "latency_ns")
		w.B = Float(w.B, "rate", 13.45)
		w.B = End(w.B)
		if err := w.Flushed(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per record, want 0", allocs)
	}
}

func TestWriterFlush(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	w.FlushAt = 20
	w.B = End(Begin(w.B, "a"))
	if err := w.Flushed(); err != nil || out.Len() != 0 {
		t.Fatalf("flushed early: %q %v", out.String(), err)
	}
	w.B = End(Begin(w.B, "b"))
	if err := w.Flushed(); err != nil || out.String() != "{\"kind\":\"a\"}\n{\"kind\":\"b\"}\n" {
		t.Fatalf("got %q %v", out.String(), err)
	}
	w.Live = true
	w.B = End(Begin(w.B, "c"))
	if err := w.Flushed(); err != nil || len(w.B) != 0 {
		t.Fatalf("live record not written: %v", err)
	}
}

func BenchmarkRecord(b *testing.B) {
	w := NewWriter(io.Discard)
	data := []byte("012e0e000a0004001b2a")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.B = Begin(w.B, "usb_event")
		w.B = Uint(w.B, "seq", uint64(i))
		w.B = Int(w.B, "ts_ns", 1750417432438355000)
		w.B = HexUint(w.B, "urb_id", 0xffff8d7e73bfa900)
		w.B = Str(w.B, "transfer", "bulk")
		w.B = Hex(w.B, "data", data)
		w.B = End(w.B)
		w.Flushed()
	}
}
