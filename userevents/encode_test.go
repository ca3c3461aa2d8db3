package userevents

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func mustSchema(t testing.TB, cmd string) *Schema {
	t.Helper()
	s, err := ParseCommand(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAppendPayload(t *testing.T) {
	s := mustSchema(t, "ev u8 a; s16 b; u32 c; s64 d; char[4] e; __rel_loc char[] f; __data_loc char[] g; struct pt h 2")
	p, err := s.AppendPayload(nil, 200, -2, uint32(0xdeadbeef), int64(-5), "hi", "xyz", "", []byte{7, 8})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		200,        // a
		0xfe, 0xff, // b
		0xef, 0xbe, 0xad, 0xde, // c
		0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // d
		'h', 'i', 0, 0, // e
		0, 0, 0, 0, // f: rel_loc, filled below
		0, 0, 0, 0, // g: data_loc
		7, 8, // h
		'x', 'y', 'z', 0, // f data at 29
		0, // g data at 33
	}
	// f at offset 19: data at 29, 4 bytes, relative to 23.
	binary.LittleEndian.PutUint32(want[19:], 4<<16|(29-23))
	// g at 23: data at 33 + 8 common bytes, 1 byte.
	binary.LittleEndian.PutUint32(want[23:], 1<<16|(33+CommonSize))
	if !bytes.Equal(p, want) {
		t.Fatalf("payload\n% x\nwant\n% x", p, want)
	}
	if err := s.ValidatePayload(p); err != nil {
		t.Fatalf("own payload invalid: %v", err)
	}
}

func TestAppendPayloadErrors(t *testing.T) {
	s := mustSchema(t, "ev u8 a; s8 b; char[4] c; __rel_loc char[] d; struct x e 2")
	ok := []any{1, 1, "abc", "s", []byte{1, 2}}
	if _, err := s.AppendPayload(nil, ok...); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		i    int
		v    any
		want string
	}{
		{0, 256, "out of range"},
		{0, -1, "out of range"},
		{1, 128, "out of range"},
		{1, -129, "out of range"},
		{0, "1", "want an integer"},
		{0, 1.5, "want an integer"},
		{2, "abcd", "does not fit"},
		{2, "a\x00", "NUL"},
		{2, 3, "want a string"},
		{3, "a\x00b", "NUL"},
		{3, strings.Repeat("x", MaxPayload), "too"},
		{4, []byte{1}, "exactly 2"},
	}
	for _, tt := range tests {
		args := append([]any(nil), ok...)
		args[tt.i] = tt.v
		_, err := s.AppendPayload(nil, args...)
		if !errors.Is(err, ErrPayload) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("field %d = %#v: %v, want %q", tt.i, tt.v, err, tt.want)
		}
	}
	if _, err := s.AppendPayload(nil, 1); !errors.Is(err, ErrPayload) {
		t.Errorf("too few values: %v", err)
	}
	big := mustSchema(t, "ev __rel_loc char[] a; __rel_loc char[] b")
	if _, err := big.AppendPayload(nil, strings.Repeat("a", 3000), strings.Repeat("b", 3000)); !errors.Is(err, ErrPayload) {
		t.Errorf("oversize payload: %v", err)
	}
}

func TestValidatePayload(t *testing.T) {
	s := mustSchema(t, "ev u32 a; __rel_loc char[] s")
	good, _ := s.AppendPayload(nil, 1, "hello")
	if err := s.ValidatePayload(good); err != nil {
		t.Fatal(err)
	}
	noNUL := bytes.Clone(good)
	noNUL[len(noNUL)-1] = 'x'
	outside := bytes.Clone(good)
	binary.LittleEndian.PutUint32(outside[4:], 10<<16)
	for name, p := range map[string][]byte{
		"short":   good[:6],
		"no NUL":  noNUL,
		"outside": outside,
		"huge":    make([]byte, MaxPayload+1),
	} {
		if err := s.ValidatePayload(p); !errors.Is(err, ErrPayload) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestAppendPayloadAllocs(t *testing.T) {
	s := mustSchema(t, "ev u32 a; s64 b; char[8] c; __rel_loc char[] d")
	buf := make([]byte, 0, 4096)
	v := 12345
	str := "a longer string value"
	n := testing.AllocsPerRun(1000, func() {
		if _, err := s.AppendPayload(buf[:0], uint32(v), int64(v), "abc", str); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per payload", n)
	}
}

type reqEvent struct {
	ID     uint32
	Status int16 `userevents:"status"`
	Flag   bool
	Tag    [8]byte
	Path   string `userevents:"path"`
	Raw    []byte `userevents:"raw,__data_loc u8[]"`
	//lint:ignore U1000 an unexported field is not an event field: the test checks that it is skipped
	skip int
	Skip int `userevents:"-"`
}

func TestLayoutOf(t *testing.T) {
	l, err := LayoutOf[reqEvent]("req")
	if err != nil {
		t.Fatal(err)
	}
	const want = "req u32 ID; s16 status; u8 Flag; char[8] Tag; __rel_loc char[] path; __data_loc u8[] raw"
	if got := l.Schema.Command(); got != want {
		t.Fatalf("command %q, want %q", got, want)
	}
	v := reqEvent{ID: 7, Status: -3, Flag: true, Tag: [8]byte{'t', 'a', 'g'}, Path: "/x", Raw: []byte{1, 2}}
	got, err := l.Append(nil, &v)
	if err != nil {
		t.Fatal(err)
	}
	want2, err := l.Schema.AppendPayload(nil, v.ID, v.Status, v.Flag, v.Tag[:], v.Path, v.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want2) {
		t.Fatalf("struct payload\n% x\nvalue payload\n% x", got, want2)
	}
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(1000, func() { _, _ = l.Append(buf[:0], &v) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
	v.Path = "a\x00b"
	if _, err := l.Append(nil, &v); !errors.Is(err, ErrPayload) {
		t.Fatalf("NUL in string: %v", err)
	}
}

func TestLayoutOfErrors(t *testing.T) {
	type bad1 struct{ F float64 }
	type bad2 struct {
		X uint32 `userevents:"x,u16"`
	}
	type bad3 struct {
		X uint32 `userevents:"x,long"`
	}
	if _, err := LayoutOf[bad1]("e"); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("float: %v", err)
	}
	if _, err := LayoutOf[bad2]("e"); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("size mismatch: %v", err)
	}
	if _, err := LayoutOf[bad3]("e"); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("long: %v", err)
	}
	if _, err := LayoutOf[int]("e"); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("not a struct: %v", err)
	}
}
