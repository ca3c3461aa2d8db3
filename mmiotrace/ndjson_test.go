package mmiotrace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/ndjson"
)

// accessGeneric is the mmio_access record built with the generic ndjson
// calls (strconv underneath): the reference for the hand-built hot path.
func accessGeneric(r *Record, fn func(uint64) string) []byte {
	b := ndjson.Begin(nil, NDJSONAccess)
	b = ndjson.Str(b, "access", r.Kind.String())
	b = ndjson.Uint(b, "width", uint64(r.Width))
	b = ndjson.Uint(b, "ts_ns", r.Time.NS)
	b = ndjson.Int(b, "map_id", int64(r.MapID))
	b = ndjson.HexUint(b, "phys", r.Phys)
	b = ndjson.HexUint(b, "value", r.Value)
	if r.PC == 0 {
		b = ndjson.Null(b, "pc")
	} else {
		b = ndjson.HexUint(b, "pc", r.PC)
	}
	if fn != nil {
		name := ""
		if r.PC != 0 {
			name = fn(r.PC)
		}
		b = ndjson.StrOrNull(b, "func", name)
	}
	return ndjson.End(b)
}

// TestNDJSONAccess: the hand-built mmio_access record (SWAR hex and
// decimal digits) is byte for byte the generic one, over edge values and
// random ones of every magnitude, appended to buffers of any spare room.
func TestNDJSONAccess(t *testing.T) {
	edges := []uint64{0, 1, 9, 10, 15, 16, 99, 100, 999999999, 1e9, 1e9 + 1, 1<<32 - 1, 1 << 32, 1e19 - 1, 1e19, math.MaxUint64, 0x0fffffffffffffff}
	rng := rand.New(rand.NewSource(1))
	val := func(i int) uint64 {
		if i < len(edges) {
			return edges[i]
		}
		return rng.Uint64() >> uint(rng.Intn(64))
	}
	names := func(pc uint64) string {
		if pc%3 == 0 {
			return ""
		}
		return "f\"" + strconv.FormatUint(pc%7, 10)
	}
	for i := 0; i < 20000; i++ {
		r := Record{Kind: KindRead, Width: uint8(val(i)), Time: Timestamp{NS: val(i + 3)}, MapID: int32(val(i + 5)),
			Phys: val(i + 1), Value: val(i + 2), PC: val(i + 4)}
		if i%2 == 1 {
			r.Kind = KindWrite
		}
		if i%5 == 0 {
			r.PC = 0
		}
		var fn func(uint64) string
		if i%4 == 0 {
			fn = names
		}
		e := NDJSONEncoder{Func: fn}
		prefix := bytes.Repeat([]byte("x"), i%300)
		dst := append(make([]byte, 0, len(prefix)+i%250), prefix...)
		got, err := e.Append(dst, &r)
		want := accessGeneric(&r, fn)
		if err != nil || !bytes.Equal(got[:len(prefix)], prefix) || !bytes.Equal(got[len(prefix):], want) {
			t.Fatalf("%+v:\ngot  %s\nwant %s", r, got[len(prefix):], want)
		}
		if !json.Valid(want) {
			t.Fatalf("not JSON: %s", want)
		}
	}
}

// TestNDJSONAccessNoAllocs: an access record allocates nothing once the
// buffer has grown.
func TestNDJSONAccessNoAllocs(t *testing.T) {
	var e NDJSONEncoder
	r := Record{Kind: KindWrite, Width: 4, Time: Timestamp{NS: 8288891000, Digits: 6}, MapID: 1, Phys: 0xfebc0008, Value: 0x80080783, PC: 0xffffffff8193100d}
	b := make([]byte, 0, 1<<16)
	allocs := testing.AllocsPerRun(1000, func() {
		b, _ = e.Append(b[:0], &r)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per record", allocs)
	}
}

// checkNDJSONLine parses line with encoding/json and checks that every
// value reads back as the record's (the text fields as encoding/json
// would carry the same bytes: invalid UTF-8 as U+FFFD).
func checkNDJSONLine(t *testing.T, line []byte, r *Record, fn func(uint64) string) {
	t.Helper()
	if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
		t.Fatalf("not one line: %q", line)
	}
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	num := func(k string) uint64 {
		t.Helper()
		n, ok := m[k].(json.Number)
		if !ok {
			t.Fatalf("%s: %q is %T", line, k, m[k])
		}
		v, err := strconv.ParseUint(n.String(), 10, 64)
		if err != nil {
			t.Fatalf("%s: %s: %v", line, k, err)
		}
		return v
	}
	hex := func(k string) uint64 {
		t.Helper()
		s, _ := m[k].(string)
		if !strings.HasPrefix(s, "0x") {
			t.Fatalf("%s: %q is %v", line, k, m[k])
		}
		v, err := strconv.ParseUint(s[2:], 16, 64)
		if err != nil || strconv.FormatUint(v, 16) != s[2:] {
			t.Fatalf("%s: %s: %v", line, k, err)
		}
		return v
	}
	text := func(k string, want []byte) {
		t.Helper()
		j, _ := json.Marshal(string(want))
		var w string
		json.Unmarshal(j, &w)
		if m[k] != w {
			t.Errorf("%s: %s %q, want %q", line, k, m[k], w)
		}
	}
	mapID := func() {
		t.Helper()
		n, err := strconv.ParseInt(m["map_id"].(json.Number).String(), 10, 32)
		if err != nil || int32(n) != r.MapID {
			t.Errorf("%s: map_id, want %d", line, r.MapID)
		}
	}
	pc := func() {
		t.Helper()
		if r.PC == 0 {
			if v, ok := m["pc"]; !ok || v != nil {
				t.Errorf("%s: pc %v, want null", line, v)
			}
		} else if hex("pc") != r.PC {
			t.Errorf("%s: pc, want %#x", line, r.PC)
		}
		if fn != nil {
			want := ""
			if r.PC != 0 {
				want = fn(r.PC)
			}
			if f, ok := m["func"]; !ok || (want == "" && f != nil) || (want != "" && f != want) {
				t.Errorf("%s: func %v, want %q", line, f, want)
			}
		}
	}
	kind := m["kind"]
	switch r.Kind {
	case KindRead, KindWrite:
		if kind != NDJSONAccess || m["access"] != r.Kind.String() || num("width") != uint64(r.Width) || hex("phys") != r.Phys || hex("value") != r.Value {
			t.Errorf("%s: want %+v", line, r)
		}
		mapID()
		pc()
	case KindUnknown:
		if kind != NDJSONUnknown || hex("phys") != r.Phys || m["opcode"] != fmt.Sprintf("%02x%02x%02x", r.Opcode[0], r.Opcode[1], r.Opcode[2]) {
			t.Errorf("%s: want %+v", line, r)
		}
		mapID()
		pc()
	case KindMap:
		if kind != NDJSONMap || hex("phys") != r.Phys || hex("virt") != r.Virt || num("length") != r.Len {
			t.Errorf("%s: want %+v", line, r)
		}
		mapID()
		pc()
	case KindUnmap:
		if kind != NDJSONUnmap {
			t.Errorf("%s: want %+v", line, r)
		}
		mapID()
		pc()
	case KindMark:
		if kind != NDJSONMark {
			t.Errorf("%s: kind", line)
		}
		text("text", r.Text)
		if n, ok := r.Lost(); ok != (m["lost"] != nil) || (ok && num("lost") != n) {
			t.Errorf("%s: lost, want %d %v", line, n, ok)
		}
	case KindPCIDev:
		p := &r.PCI
		if kind != NDJSONPCIDev || m["pci"] != p.Addr().String() || m["pci_id"] != fmt.Sprintf("%04x:%04x", p.Vendor, p.Device) || num("irq") != p.IRQ {
			t.Errorf("%s: want %+v", line, p)
		}
		if len(p.Driver) == 0 {
			if v, ok := m["driver"]; !ok || v != nil {
				t.Errorf("%s: driver %v, want null", line, v)
			}
		} else {
			text("driver", p.Driver)
		}
		bars := m["bars"].([]any)
		k := 0
		for i := range p.Base {
			if p.Base[i] == 0 && p.Size[i] == 0 {
				continue
			}
			o := bars[k].(map[string]any)
			k++
			idx, _ := o["index"].(json.Number).Int64()
			size, _ := strconv.ParseUint(o["size"].(json.Number).String(), 10, 64)
			flags, _ := o["flags"].(json.Number).Int64()
			start, _ := strconv.ParseUint(strings.TrimPrefix(o["start"].(string), "0x"), 16, 64)
			if idx != int64(i) || size != p.Size[i] || start|uint64(flags) != p.Base[i] || o["io"] != (p.Base[i]&1 != 0) {
				t.Errorf("%s: bar %d %v, want base %#x size %#x", line, i, o, p.Base[i], p.Size[i])
			}
		}
		if k != len(bars) {
			t.Errorf("%s: %d bars, want %d", line, len(bars), k)
		}
	default:
		want := map[Kind]string{KindVersion: NDJSONVersion, KindLSPCI: NDJSONLSPCI, KindComment: NDJSONComment, KindOther: NDJSONOther}[r.Kind]
		if kind != want {
			t.Errorf("%s: kind, want %s", line, want)
		}
		text("text", r.Text)
	}
	switch r.Kind {
	case KindRead, KindWrite, KindUnknown, KindMap, KindUnmap, KindMark:
		if num("ts_ns") != r.Time.NS {
			t.Errorf("%s: ts_ns, want %d", line, r.Time.NS)
		}
	}
}

// encodeAll reads every record of log (bad lines skipped) and checks the
// NDJSON line of each; it returns the records read.
func encodeAll(t *testing.T, log []byte, fn func(uint64) string) int {
	t.Helper()
	rd := NewReader(bytes.NewReader(log))
	rd.SetKeepGoing(true)
	e := NDJSONEncoder{Func: fn}
	var r Record
	n := 0
	for {
		if err := rd.ReadInto(&r); err != nil {
			return n
		}
		line, err := e.Append(nil, &r)
		if err != nil {
			t.Fatal(err)
		}
		checkNDJSONLine(t, line, &r, fn)
		n++
	}
}

// TestNDJSONKinds: every record of the lab log and of the one-of-each-kind
// log reads back through encoding/json as the Reader parsed it.
func TestNDJSONKinds(t *testing.T) {
	for _, name := range []string{"testdata/kinds.log", "testdata/e1000-bind.log"} {
		log, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		n := encodeAll(t, log, func(pc uint64) string { return "fn" + strconv.FormatUint(pc&0xff, 16) })
		if n < 14 {
			t.Errorf("%s: %d records", name, n)
		}
		encodeAll(t, log, nil)
	}
}

// FuzzNDJSON: whatever a log holds, every record the Reader returns
// encodes to one line that encoding/json parses, with every value read
// back as the record's.
func FuzzNDJSON(f *testing.F) {
	log, err := os.ReadFile("testdata/kinds.log")
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range bytes.SplitAfter(log, []byte("\n")) {
		f.Add(l)
	}
	f.Add([]byte("MARK 1.5 \xff\xfe\x00\x1f\"\\ é\n"))
	f.Add([]byte("R 4 0.000000 -2147483648 0x0 0x0 0x0 0\n"))
	f.Add([]byte("PCIDEV ffff ffffffff ffffffffffffffff ffffffffffffffff 1 2 3 4 5 6 7 8 9 a b c d \xff\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		encodeAll(t, data, func(pc uint64) string { return string(rune(pc)) })
	})
}

func BenchmarkNDJSONAccess(b *testing.B) {
	var e NDJSONEncoder
	r := Record{Kind: KindRead, Width: 4, Time: Timestamp{NS: 2000687000, Digits: 6}, MapID: 1, Phys: 0xfebc0008, Value: 0x80080783, PC: 0xffffffff8193100d}
	buf := make([]byte, 0, 1<<16)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if len(buf) > 60000 {
			buf = buf[:0]
		}
		buf, _ = e.Append(buf, &r)
	}
}
