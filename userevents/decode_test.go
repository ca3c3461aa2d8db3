package userevents

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"sort"
	"strings"
	"testing"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The format files were written by the lab kernel (Linux 6.12); it prints
// array lengths of user event fields from uninitialised memory ("char
// b[1893794053]", or "char c[]"), which the parser must ignore.
func TestParseFormatGolden(t *testing.T) {
	f, err := ParseFormat(readTestdata(t, "format_iotap_lab_pg.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "iotap_lab_pg" || f.ID != 1180 || len(f.Fields) != 8 {
		t.Fatalf("%+v", f)
	}
	want := []FormatField{
		{Type: "unsigned short", Name: "common_type", Offset: 0, Size: 2, Common: true, Kind: KindUint},
		{Type: "unsigned char", Name: "common_flags", Offset: 2, Size: 1, Common: true, Kind: KindUint},
		{Type: "unsigned char", Name: "common_preempt_count", Offset: 3, Size: 1, Common: true, Kind: KindUint},
		{Type: "int", Name: "common_pid", Offset: 4, Size: 4, Signed: true, Common: true, Kind: KindInt},
		{Type: "u32", Name: "a", Offset: 8, Size: 4, Kind: KindUint},
		{Type: "s16", Name: "b", Offset: 12, Size: 2, Signed: true, Kind: KindInt},
		{Type: "__rel_loc char[]", Name: "s", Offset: 14, Size: 4, Signed: true, Kind: KindRelLoc, String: true},
		{Type: "char[6]", Name: "c", Offset: 18, Size: 6, Signed: true, Kind: KindArray, String: true},
	}
	for i := range want {
		if f.Fields[i] != want[i] {
			t.Errorf("field %d: %+v, want %+v", i, f.Fields[i], want[i])
		}
	}
	if !f.Matches(mustSchema(t, "iotap_lab_pg u32 a; s16 b; __rel_loc char[] s; char[6] c")) {
		t.Error("format does not match its schema")
	}
	if f.Matches(mustSchema(t, "iotap_lab_pg u32 a; s16 b; __rel_loc char[] s; char[7] c")) {
		t.Error("format matches another schema")
	}
	g, err := ParseFormat(readTestdata(t, "format_iotap_lab_en.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !g.Matches(mustSchema(t, "iotap_lab_en u32 a; char[16] b; __rel_loc char[] s")) {
		t.Errorf("garbage array lengths not repaired: %+v", g.Fields)
	}
}

func TestParseFormatErrors(t *testing.T) {
	good := string(readTestdata(t, "format_iotap_lab_pg.txt"))
	tests := []struct {
		in   string
		line int
	}{
		{strings.Replace(good, "ID: 1180", "ID: x", 1), 2},
		{strings.Replace(good, "offset:8;", "offset:-8;", 1), 9},
		{strings.Replace(good, "offset:8;", "", 1), 9},
		{strings.Replace(good, "field:u32 a;", "field:a;", 1), 9},
		{strings.Replace(good, "field:__rel_loc char s[];\toffset:14;\tsize:4;", "field:__rel_loc char s[];\toffset:14;\tsize:2;", 1), 11},
		{strings.Replace(good, "name: iotap_lab_pg\n", "", 1), 13},
		{good + "junk\n", 15},
		{strings.Replace(good, "field:s16 b;", "field:s16 a;", 1), 10},
	}
	for i, tt := range tests {
		_, err := ParseFormat([]byte(tt.in))
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Line != tt.line {
			t.Errorf("case %d: %v, want an error at line %d", i, err, tt.line)
		}
	}
}

// TestDecodeGoldenPages decodes the two per-CPU pages the lab captured:
// four events written with 3 ms between them, one with a 161-byte string
// (a type_len 0 event with its length word).
func TestDecodeGoldenPages(t *testing.T) {
	f, err := ParseFormat(readTestdata(t, "format_iotap_lab_pg.txt"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseHeaderPage(readTestdata(t, "header_page.txt"))
	if err != nil || l != DefaultPageLayout {
		t.Fatalf("header_page: %+v %v", l, err)
	}
	var recs []RawRecord
	for _, name := range []string{"page_iotap_lab_pg_cpu0.bin", "page_iotap_lab_pg_cpu1.bin"} {
		info, rs, err := DecodePage(readTestdata(t, name), l, nil)
		if err != nil || info.Missed || info.Length == 0 {
			t.Fatalf("%s: %+v %v", name, info, err)
		}
		for _, r := range rs {
			if r.TS < info.Timestamp {
				t.Errorf("%s: record before its page", name)
			}
		}
		recs = append(recs, rs...)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].TS < recs[j].TS })
	strs := []string{"", "a", "hello world", strings.Repeat("long", 40)}
	if len(recs) != len(strs) {
		t.Fatalf("%d records", len(recs))
	}
	for i, rec := range recs {
		c, ok := ParseCommon(rec.Data)
		if !ok || c.Type != uint16(f.ID) || c.PID <= 0 {
			t.Fatalf("record %d common %+v", i, c)
		}
		vals, err := f.Decode(rec.Data, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := []any{vals[0].Any(), vals[1].Any(), vals[2].Any(), vals[3].Any()}
		want := []any{uint64(i), int64(-i), strs[i], "c" + string(rune('0'+i))}
		for j := range want {
			if got[j] != want[j] {
				t.Errorf("record %d field %d: %#v, want %#v", i, j, got[j], want[j])
			}
		}
	}
	// 3 ms apart (at least) in trace clock nanoseconds.
	for i := 1; i < len(recs); i++ {
		if d := recs[i].TS - recs[i-1].TS; d < 3e6 || d > 1e9 {
			t.Errorf("delta %d: %d ns", i, d)
		}
	}
}

// page builds a ring-buffer page for the tests of rare event types.
type pageBuilder struct{ b []byte }

func newPage(ts uint64) *pageBuilder {
	p := &pageBuilder{b: make([]byte, 16, 4096)}
	binary.LittleEndian.PutUint64(p.b, ts)
	return p
}

func (p *pageBuilder) word(typeLen, delta uint32) {
	p.b = binary.LittleEndian.AppendUint32(p.b, typeLen|delta<<5)
}

func (p *pageBuilder) data(delta uint32, d []byte) {
	for len(d)%4 != 0 {
		d = append(d, 0)
	}
	if len(d) <= 112 {
		p.word(uint32(len(d)/4), delta)
	} else {
		p.word(0, delta)
		p.b = binary.LittleEndian.AppendUint32(p.b, uint32(len(d)+4))
	}
	p.b = append(p.b, d...)
}

func (p *pageBuilder) finish(flags uint64) []byte {
	binary.LittleEndian.PutUint64(p.b[8:], uint64(len(p.b)-16)|flags)
	out := make([]byte, 4096)
	copy(out, p.b)
	return out
}

func TestDecodePageEventTypes(t *testing.T) {
	p := newPage(1000)
	p.data(5, []byte("abcd")) // ts 1005
	p.word(typeTimeExtend, 7) // +7 + 2<<27
	p.b = binary.LittleEndian.AppendUint32(p.b, 2)
	p.data(1, []byte("efgh")) // 1005+7+2<<27+1
	p.word(typePadding, 3)    // a discarded event of 12 bytes: array[0] counts all but the header
	p.b = binary.LittleEndian.AppendUint32(p.b, 8)
	p.b = append(p.b, make([]byte, 4)...)
	p.word(typeTimeStamp, 50) // absolute 50 | 1<<27
	p.b = binary.LittleEndian.AppendUint32(p.b, 1)
	p.data(0, bytes.Repeat([]byte{'x'}, 200)) // long event with length word
	page := p.finish(0)
	info, recs, err := DecodePage(page, DefaultPageLayout, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.Discarded != 1 || len(recs) != 3 {
		t.Fatalf("info %+v, %d records", info, len(recs))
	}
	wantTS := []uint64{1005, 1005 + 7 + 2<<27 + 1, 50 | 1<<27}
	for i, r := range recs {
		if r.TS != wantTS[i] {
			t.Errorf("record %d ts %d, want %d", i, r.TS, wantTS[i])
		}
	}
	if string(recs[0].Data) != "abcd" || len(recs[2].Data) != 200 || recs[2].Data[199] != 'x' {
		t.Errorf("data %q %d", recs[0].Data, len(recs[2].Data))
	}

	// Missed events, with the count stored after the data.
	q := newPage(1)
	q.data(0, []byte("abcd"))
	page = q.finish(missedEvents | missedStored)
	binary.LittleEndian.PutUint64(page[16+8:], 42)
	info, recs, err = DecodePage(page, DefaultPageLayout, nil)
	if err != nil || !info.Missed || info.Lost != 42 || len(recs) != 1 {
		t.Fatalf("missed: %+v %d %v", info, len(recs), err)
	}
	// Missed events without a count.
	page = q.finish(missedEvents)
	if info, _, _ = DecodePage(page, DefaultPageLayout, nil); !info.Missed || info.Lost != 0 {
		t.Fatalf("missed without count: %+v", info)
	}
}

func TestDecodePageErrors(t *testing.T) {
	good := newPage(1)
	good.data(0, []byte("abcdefgh"))
	tests := map[string]func([]byte){
		"commit beyond page": func(b []byte) { binary.LittleEndian.PutUint64(b[8:], 5000) },
		"event overruns":     func(b []byte) { binary.LittleEndian.PutUint64(b[8:], 6) },
		"bad length word":    func(b []byte) { b[16] = 0; binary.LittleEndian.PutUint32(b[20:], 4000) },
		"bad padding":        func(b []byte) { b[16] = typePadding | 1<<5; binary.LittleEndian.PutUint32(b[20:], 4000) },
	}
	for name, mod := range tests {
		b := good.finish(0)
		mod(b)
		_, _, err := DecodePage(b, DefaultPageLayout, nil)
		var pe *PageError
		if !errors.As(err, &pe) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, _, err := DecodePage(make([]byte, 10), DefaultPageLayout, nil); err == nil {
		t.Error("short page accepted")
	}
}

func TestDecodeRecordErrors(t *testing.T) {
	f, err := ParseFormat(readTestdata(t, "format_iotap_lab_pg.txt"))
	if err != nil {
		t.Fatal(err)
	}
	rec := make([]byte, 24)
	binary.LittleEndian.PutUint32(rec[14:], 100<<16|2) // 100 bytes beyond the end
	if _, err := f.Decode(rec, nil); !errors.Is(err, ErrPayload) {
		t.Errorf("dynamic field beyond record: %v", err)
	}
	if _, err := f.Decode(rec[:10], nil); !errors.Is(err, ErrPayload) {
		t.Errorf("short record: %v", err)
	}
}

func TestParseStatusGolden(t *testing.T) {
	st, err := ParseStatus(readTestdata(t, "status_busy.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Active != 1 || st.Busy != 1 || len(st.Events) != 1 || st.Events[0].Name != "iotap_lab_en" || strings.Join(st.Events[0].UsedBy, ",") != "ftrace" {
		t.Fatalf("%+v", st)
	}
	st, err = ParseStatus(readTestdata(t, "status_idle.txt"))
	if err != nil || st.Active != 1 || st.Busy != 0 || len(st.Events[0].UsedBy) != 0 {
		t.Fatalf("%+v %v", st, err)
	}
	// Pre-6.4 format.
	st, err = ParseStatus([]byte("1:test # Used by ftrace perf\n2:other\n\nActive: 2\nBusy: 1\nMax: 4096\n"))
	if err != nil || len(st.Events) != 2 || st.Events[0].Name != "test" || len(st.Events[0].UsedBy) != 2 || st.Active != 2 {
		t.Fatalf("old format: %+v %v", st, err)
	}
	for _, bad := range []string{"a b\n", "x\n\nActive: z\n", "x\n\nActive: 1\ny\n"} {
		if _, err := ParseStatus([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestAppendNDJSON(t *testing.T) {
	f, err := ParseFormat(readTestdata(t, "format_iotap_lab_pg.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, recs, err := DecodePage(readTestdata(t, "page_iotap_lab_pg_cpu0.bin"), DefaultPageLayout, nil)
	if err != nil || len(recs) == 0 {
		t.Fatal(err)
	}
	vals, _ := f.Decode(recs[0].Data, nil)
	rec := &Recorded{System: System, Name: f.Name, TS: 12345, CPU: 0, PID: 72, Format: f, Values: vals}
	got := string(AppendNDJSON(nil, rec))
	const want = `{"kind":"user_event","ts_ns":12345,"wall_ns":null,"cpu":0,"tid":72,"pid":null,"system":"user_events","name":"iotap_lab_pg","fields":{"a":2,"b":-2,"s":"hello world","c":"c2"}}` + "\n"
	if got != want {
		t.Errorf("json\n%s\nwant\n%s", got, want)
	}
	if got := string(AppendText(nil, rec)); got != `0.000012345 [000] 72 iotap_lab_pg: a=2 b=-2 s="hello world" c="c2"` {
		t.Errorf("text %s", got)
	}
}
