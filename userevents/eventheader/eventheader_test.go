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
		{"status", EncValue32, 0, le.AppendUint32(nil, 404)},
		{"delta", EncValue32, FmtSignedInt, le.AppendUint32(nil, uint32(0xfffffffb))},
		{"flags", EncValue16, FmtHexInt, le.AppendUint16(nil, 0xbeef)},
		{"err", EncValue32, FmtErrno, le.AppendUint32(nil, 2)},
		{"ok", EncValue8, FmtBoolean, []byte{1}},
		{"path", EncZStringChar8, 0, []byte("/index.html")},
		{"blob", EncBinaryLength16Char8, 0, []byte{1, 2, 0xff}},
		{"msg", EncStringLength16Char8, 0, []byte(`say "hi"`)},
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
	if _, err := Append(nil, Header{}, "E", []Value{{"x", EncValue32, 0, []byte{1}}}); err == nil {
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
	b, _ := Append(nil, Header{Level: 4}, "E", []Value{{"a", EncValue32, FmtTime, le.AppendUint32(nil, 1)}, {"s", EncZStringChar8, 0, []byte("x")}})
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
	for _, a := range []string{"n=5", "m=-3", "s=hello world", "u:u16=0x10", "h:x32=255", "b:bool=true", "e:errno=13", "raw:bin=0aff"} {
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
	want := `{"n":"P:E","n":5,"m":-3,"s":"hello world","u":16,"h":"0xFF","b":true,"e":"EACCES(13)","raw":"0a ff","meta":{"ts":0,"cpu":0,"pid":0,"tid":0,"level":5,"keyword":"0x1"}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, bad := range []string{"noequals", "x:u8=256", "y:f32=1", "z:bin=zz"} {
		if _, err := ParseArg(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
