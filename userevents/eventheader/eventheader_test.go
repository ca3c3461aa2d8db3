package eventheader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func TestParseName(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Name
		ok   bool
	}{
		{"MyProvider_L3K2a", Name{"MyProvider", 3, 0x2a, ""}, true},
		{"OtherProvider_L5K0Gperf", Name{"OtherProvider", 5, 0, "Gperf"}, true},
		{"A_B_L1Kf123456789abcdef", Name{"A_B", 1, 0xf123456789abcdef, ""}, true},
		{"My_Long_L2Kff_L4K1", Name{"My_Long_L2Kff", 4, 1, ""}, true},
		{"NoSuffix", Name{}, false},
		{"P_LK1", Name{}, false},
		{"P_L1K", Name{}, false},
		{"P_L1K1g", Name{}, false}, // options start with an uppercase letter
		{"P_L1KA", Name{}, false},  // uppercase hex is not the convention
		{"has space_L1K1", Name{}, false},
	} {
		got, ok := ParseName(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("ParseName(%q) = %+v %v, want %+v %v", c.in, got, ok, c.want, c.ok)
		}
		if ok && got.String() != c.in {
			t.Errorf("%q round-trips as %q", c.in, got.String())
		}
	}
}

// TestAppendDecode builds an event with Append and reads it back with
// Decode and AppendJSON; the expected JSON is written by hand from the
// format's rules (perf-decode's output on LinuxTracepoints' corpus is
// the oracle of the formatting, in userevents' TestPerfDataLinuxTracepoints).
func TestAppendDecode(t *testing.T) {
	le := binary.LittleEndian
	vals := []Value{
		{Name: "status", Encoding: EncValue32, Format: 0, Data: le.AppendUint32(nil, 404)},
		{Name: "delta", Encoding: EncValue32, Format: FmtSignedInt, Data: le.AppendUint32(nil, uint32(0xfffffffb))},
		{Name: "flags", Encoding: EncValue16, Format: FmtHexInt, Data: le.AppendUint16(nil, 0xbeef)},
		{Name: "err", Encoding: EncValue32, Format: FmtErrno, Data: le.AppendUint32(nil, 2)},
		{Name: "ok", Encoding: EncValue8, Format: FmtBoolean, Data: []byte{1}},
		{Name: "path", Encoding: EncZStringChar8, Format: 0, Data: []byte("/index.html")},
		{Name: "blob", Encoding: EncBinaryLength16Char8, Format: 0, Data: []byte{1, 2, 0xff}},
		{Name: "msg", Encoding: EncStringLength16Char8, Format: 0, Data: []byte(`say "hi"`)},
	}
	b, err := Append(nil, Header{ID: 7, Version: 1, Opcode: 1, Level: 4, Tag: 0x12}, "Request", vals)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := Decode("MyProvider_L4K1f", b)
	if err != nil {
		t.Fatal(err)
	}
	got := string(AppendJSON(nil, ev, Meta{TS: 5, CPU: 1, PID: 10, TID: 11}))
	want := `{"n":"MyProvider:Request","status":404,"delta":-5,"flags":"0xBEEF","err":"ENOENT(2)","ok":true,"path":"/index.html","blob":"01 02 ff","msg":"say \"hi\"",` +
		`"meta":{"ts":5,"cpu":1,"pid":10,"tid":11,"id":7,"version":1,"level":4,"keyword":"0x1F","opcode":1,"tag":"0x12"}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := Append(nil, Header{}, "bad;name", nil); err == nil {
		t.Error("';' in an event name accepted")
	}
	if _, err := Append(nil, Header{}, "E", []Value{{Name: "x", Encoding: EncValue32, Format: 0, Data: []byte{1}}}); err == nil {
		t.Error("1 byte for a value32 accepted")
	}
}

// TestDecodeArraysStructs covers constant and variable arrays, a struct
// and an array of structs, and the activity-id extension, in big-endian.
func TestDecodeArraysStructs(t *testing.T) {
	be := binary.BigEndian
	var meta []byte
	meta = append(meta, "Ev\x00"...)
	meta = append(meta, "c\x00"...)
	meta = append(meta, EncValue16|EncCArray)
	meta = be.AppendUint16(meta, 2)
	meta = append(meta, "v\x00"...)
	meta = append(meta, EncValue8|EncVArray)
	meta = append(meta, "s\x00"...)
	meta = append(meta, EncStruct|encChain, 2)
	meta = append(meta, "a\x00"...)
	meta = append(meta, EncValue8)
	meta = append(meta, "z\x00"...)
	meta = append(meta, EncZStringChar16)
	act := bytes.Repeat([]byte{0xab}, 16)
	var b []byte
	b = append(b, FlagExtension, 0, 0, 0, 0, 0, 0, 5)
	b = be.AppendUint16(b, 16)
	b = be.AppendUint16(b, ExtActivityID|extChain)
	b = append(b, act...)
	b = be.AppendUint16(b, uint16(len(meta)))
	b = be.AppendUint16(b, ExtMetadata)
	b = append(b, meta...)
	b = be.AppendUint16(b, 1)
	b = be.AppendUint16(b, 2)
	b = be.AppendUint16(b, 3) // varray count
	b = append(b, 7, 8, 9)
	b = append(b, 42)
	b = append(b, 0, 'h', 0, 'i', 0, 0)
	b = append(b, 0, 0, 0) // padding
	ev, err := Decode("P_L5K0", b)
	if err != nil {
		t.Fatal(err)
	}
	got := string(AppendJSON(nil, ev, Meta{}))
	want := `{"n":"P:Ev","c":[1,2],"v":[7,8,9],"s":{"a":42,"z":"hi"},"meta":{"ts":0,"cpu":0,"pid":0,"tid":0,"level":5,"activity":"abababab-abab-abab-abab-abababababab"}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Cut anywhere before the last field (an unterminated string at the
	// end of a record is taken whole): an error with an offset inside the
	// event, never a panic.
	for n := 0; n < len(b)-9; n++ {
		_, err := Decode("P_L5K0", b[:n])
		var e *Error
		if err == nil || !errors.As(err, &e) || e.Offset > n {
			t.Errorf("cut at %d: %v", n, err)
		}
	}
	if _, err := Decode("not_eventheader", b); err == nil || !strings.Contains(err.Error(), "naming") {
		t.Errorf("bad name: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	le := binary.LittleEndian
	b, _ := Append(nil, Header{Level: 4}, "E", []Value{{Name: "a", Encoding: EncValue32, Format: FmtTime, Data: le.AppendUint32(nil, 1)}, {Name: "s", Encoding: EncZStringChar8, Format: 0, Data: []byte("x")}})
	f.Add("P_L4K1", b)
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		ev, err := Decode(name, data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(data) {
				t.Fatalf("error without a valid offset: %v", err)
			}
			return
		}
		_ = AppendJSON(nil, ev, Meta{})
	})
}

func TestParseArg(t *testing.T) {
	var vals []Value
	for _, a := range []string{"n=5", "m=-3", "s=hello world", "u:u16=0x10", "h:x32=255", "b:bool=true", "e:errno=13", "raw:bin=0aff",
		"w:str16=hé😀", "d:str32=ok", "ports:u16[]=80,443", "names:str[]=a,b c", "none:s32[]="} {
		v, err := ParseArg(a)
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, v)
	}
	b, err := Append(nil, Header{Level: 5}, "E", vals)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := Decode("P_L5K1", b)
	if err != nil {
		t.Fatal(err)
	}
	got := string(AppendJSON(nil, ev, Meta{}))
	want := `{"n":"P:E","n":5,"m":-3,"s":"hello world","u":16,"h":"0xFF","b":true,"e":"EACCES(13)","raw":"0a ff","w":"hé😀","d":"ok","ports":[80,443],"names":["a","b c"],"none":[],"meta":{"ts":0,"cpu":0,"pid":0,"tid":0,"level":5,"keyword":"0x1"}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, bad := range []string{"noequals", "x:u8=256", "y:f32=1", "z:bin=zz", "a:u8[]=1,300", "b:bin[]=00", "c:[]=1", "d:str16=a\x00b"} {
		if _, err := ParseArg(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestAppendArraysStructs encodes constant and variable arrays, a struct
// with a tagged field, 16- and 32-bit character strings and an array of
// structs with Append, and compares the bytes with the same event built
// by hand from eventheader.h's layout (field definitions in the metadata:
// name NUL, encoding byte with array flags and chain bit, format byte
// with chain bit, u16 tag, u16 constant count; payload: u16 count before a
// variable array's elements, u16 length in characters before counted
// strings, a NUL character after zero-terminated ones).
func TestAppendArraysStructs(t *testing.T) {
	le := binary.LittleEndian
	u32 := func(v uint32) []byte { return le.AppendUint32(nil, v) }
	vals := []Value{
		{Name: "c", Encoding: EncValue16, Array: EncCArray, Elems: []Value{{Data: le.AppendUint16(nil, 1)}, {Data: le.AppendUint16(nil, 2)}}},
		{Name: "v", Encoding: EncValue8, Array: EncVArray, Elems: []Value{{Data: []byte{7}}, {Data: []byte{8}}, {Data: []byte{9}}}},
		{Name: "s", Encoding: EncStruct, Members: []Value{
			{Name: "a", Encoding: EncValue8, Tag: 0x1234, Data: []byte{42}},
			{Name: "z", Encoding: EncZStringChar16, Data: []byte{'h', 0, 'i', 0}},
		}},
		{Name: "w", Encoding: EncStringLength16Char32, Data: []byte{'o', 0, 0, 0, 'k', 0, 0, 0}},
		{Name: "ps", Encoding: EncStruct, Array: EncVArray,
			Members: []Value{{Name: "x", Encoding: EncValue32, Format: FmtHexInt}},
			Elems:   []Value{{Members: []Value{{Data: u32(1)}}}, {Members: []Value{{Data: u32(0xbeef)}}}}},
	}
	got, err := Append(nil, Header{Level: 5}, "Ev", vals)
	if err != nil {
		t.Fatal(err)
	}
	var meta []byte
	meta = append(meta, "Ev\x00"...)
	meta = append(meta, "c\x00"...)
	meta = append(meta, EncValue16|EncCArray)
	meta = le.AppendUint16(meta, 2)
	meta = append(meta, "v\x00"...)
	meta = append(meta, EncValue8|EncVArray)
	meta = append(meta, "s\x00"...)
	meta = append(meta, EncStruct|encChain, 2)
	meta = append(meta, "a\x00"...)
	meta = append(meta, EncValue8|encChain, fmtChain)
	meta = le.AppendUint16(meta, 0x1234)
	meta = append(meta, "z\x00"...)
	meta = append(meta, EncZStringChar16)
	meta = append(meta, "w\x00"...)
	meta = append(meta, EncStringLength16Char32)
	meta = append(meta, "ps\x00"...)
	meta = append(meta, EncStruct|EncVArray|encChain, 1)
	meta = append(meta, "x\x00"...)
	meta = append(meta, EncValue32|encChain, FmtHexInt)
	var want []byte
	want = append(want, FlagPointer64|FlagLittleEndian|FlagExtension, 0, 0, 0, 0, 0, 0, 5)
	want = le.AppendUint16(want, uint16(len(meta)))
	want = le.AppendUint16(want, ExtMetadata)
	want = append(want, meta...)
	want = le.AppendUint16(want, 1)
	want = le.AppendUint16(want, 2)
	want = le.AppendUint16(want, 3)
	want = append(want, 7, 8, 9)
	want = append(want, 42)
	want = append(want, 'h', 0, 'i', 0, 0, 0)
	want = le.AppendUint16(want, 2)
	want = append(want, 'o', 0, 0, 0, 'k', 0, 0, 0)
	want = le.AppendUint16(want, 2)
	want = append(want, u32(1)...)
	want = append(want, u32(0xbeef)...)
	if !bytes.Equal(got, want) {
		t.Fatalf("Append:\n got  % x\n want % x", got, want)
	}
	ev, err := Decode("P_L5K0", got)
	if err != nil {
		t.Fatal(err)
	}
	js := string(AppendJSON(nil, ev, Meta{}))
	wantJS := `{"n":"P:Ev","c":[1,2],"v":[7,8,9],"s":{"a":42,"z":"hi"},"w":"ok","ps":[{"x":"0x1"},{"x":"0xBEEF"}],"meta":{"ts":0,"cpu":0,"pid":0,"tid":0,"level":5}}`
	if js != wantJS {
		t.Errorf("decoded:\n got  %s\n want %s", js, wantJS)
	}

	// What Append refuses.
	bad := []struct {
		name string
		v    Value
	}{
		{"empty constant array", Value{Name: "c", Encoding: EncValue8, Array: EncCArray}},
		{"both array flags", Value{Name: "c", Encoding: EncValue8, Array: EncCArray | EncVArray, Elems: []Value{{Data: []byte{1}}}}},
		{"short element", Value{Name: "c", Encoding: EncValue16, Array: EncVArray, Elems: []Value{{Data: []byte{1}}}}},
		{"struct without fields", Value{Name: "s", Encoding: EncStruct}},
		{"struct value count", Value{Name: "s", Encoding: EncStruct, Members: []Value{{Name: "a", Encoding: EncValue8}}, Array: EncVArray, Elems: []Value{{}}}},
		{"odd char16 string", Value{Name: "z", Encoding: EncZStringChar16, Data: []byte{'h'}}},
		{"NUL char32 in string", Value{Name: "z", Encoding: EncZStringChar32, Data: make([]byte, 4)}},
		{"unknown encoding", Value{Name: "x", Encoding: encMax}},
	}
	for _, c := range bad {
		if _, err := Append(nil, Header{}, "E", []Value{c.v}); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}
