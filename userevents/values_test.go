package userevents

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseValues(t *testing.T) {
	s := mustSchema(t, "ev u8 a; s16 b; u64 c; char[4] e; __rel_loc char[] f; struct pt h 2")
	for _, tc := range []struct {
		args    []string
		want    []any
		wantErr string
	}{
		{nil, []any{0, 0, 0, "", "", []byte{0, 0}}, ""},
		{[]string{"a=255", "b=-0x10", "c=0xffffffffffffffff", "e=abc", "f=x y", "h=0a0b"},
			[]any{uint64(255), int64(-16), uint64(1<<64 - 1), "abc", "x y", []byte{10, 11}}, ""},
		{[]string{"b=010"}, []any{0, int64(8), 0, "", "", []byte{0, 0}}, ""}, // Go syntax: octal
		{[]string{"a=256"}, nil, `field a (u8): "256" is not a 8-bit unsigned integer`},
		{[]string{"b=40000"}, nil, `field b (s16): "40000" is not a 16-bit signed integer`},
		{[]string{"h=0a"}, nil, "field h (struct pt): want 2 bytes in hex"},
		{[]string{"z=1"}, nil, `ev has no field "z" (fields: a, b, c, e, f, h)`},
		{[]string{"a"}, nil, `"a": want field=value`},
		{[]string{"e=toolong"}, nil, "e"},
	} {
		got, err := s.ParseValues(tc.args)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %#v, %v; want %#v", tc.args, got, err, tc.want)
		}
	}
}
