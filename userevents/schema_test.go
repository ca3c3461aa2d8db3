package userevents

import (
	"errors"
	"strings"
	"testing"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		cmd     string
		fields  []Field
		fixed   int
		command string
	}{
		{cmd: "empty", command: "empty"},
		{cmd: "test u32 a; char[16] b", fixed: 20, command: "test u32 a; char[16] b", fields: []Field{
			{Type: "u32", Name: "a", Kind: KindUint, Size: 4},
			{Type: "char[16]", Name: "b", Kind: KindArray, Size: 16, Offset: 4, String: true}}},
		{cmd: "t unsigned int x;s64 y;__rel_loc char[] s", fixed: 16, command: "t unsigned int x; s64 y; __rel_loc char[] s", fields: []Field{
			{Type: "unsigned int", Name: "x", Kind: KindUint, Size: 4},
			{Type: "s64", Name: "y", Kind: KindInt, Size: 8, Offset: 4},
			{Type: "__rel_loc char[]", Name: "s", Kind: KindRelLoc, Size: 4, Offset: 12, String: true}}},
		{cmd: "p struct point pt 12; __data_loc u8[] raw", fixed: 16, command: "p struct point pt 12; __data_loc u8[] raw", fields: []Field{
			{Type: "struct point", Name: "pt", Kind: KindStruct, Size: 12},
			{Type: "__data_loc u8[]", Name: "raw", Kind: KindDataLoc, Size: 4, Offset: 12}}},
		{cmd: "c  char c1 ;  unsigned char[3] arr;", fixed: 4, command: "c char c1; unsigned char[3] arr", fields: []Field{
			{Type: "char", Name: "c1", Kind: KindInt, Size: 1},
			{Type: "unsigned char[3]", Name: "arr", Kind: KindArray, Size: 3, Offset: 1, String: true}}},
	}
	for _, tt := range tests {
		s, err := ParseCommand(tt.cmd)
		if err != nil {
			t.Errorf("%q: %v", tt.cmd, err)
			continue
		}
		if got := s.Command(); got != tt.command {
			t.Errorf("%q: command %q, want %q", tt.cmd, got, tt.command)
		}
		if s.FixedSize != tt.fixed || len(s.Fields) != len(tt.fields) {
			t.Errorf("%q: fixed %d fields %d, want %d %d", tt.cmd, s.FixedSize, len(s.Fields), tt.fixed, len(tt.fields))
			continue
		}
		for i := range tt.fields {
			if s.Fields[i] != tt.fields[i] {
				t.Errorf("%q field %d: %+v, want %+v", tt.cmd, i, s.Fields[i], tt.fields[i])
			}
		}
	}
}

func TestParseCommandErrors(t *testing.T) {
	tests := []struct{ cmd, want string }{
		{"", "event name"},
		{"1abc u32 a", "event name"},
		{"a-b u32 a", "event name"},
		{"ev:BPF_ITER u32 a", "flags"},
		{"ev long a", "long"},
		{"ev unsigned long a", "long"},
		{"ev u32", "missing field name"},
		{"ev u32 a b", "unexpected"},
		{"ev u24 a", "unknown type"},
		{"ev char[0] a", "N in 1..1024"},
		{"ev char[1025] a", "N in 1..1024"},
		{"ev char[0x10] a", "N in 1..1024"},
		{"ev struct s a", "size"},
		{"ev struct s a 0", "struct size"},
		{"ev __rel_loc char a", "dynamic field is an array"},
		{"ev u32 a; u32 a", "duplicate"},
		{"ev u32 a\x01", "printable"},
		{"ev u32 " + strings.Repeat("a", 600), "at most 511"},
		{"ev char[1024] a; char[1024] b; char[1024] c; char[1024] d", "more than the"},
	}
	for _, tt := range tests {
		_, err := ParseCommand(tt.cmd)
		if err == nil {
			t.Errorf("%q: no error", tt.cmd)
			continue
		}
		if !errors.Is(err, ErrInvalidCommand) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want ErrInvalidCommand mentioning %q", tt.cmd, err, tt.want)
		}
	}
}

func TestCommandErrorOffset(t *testing.T) {
	_, err := ParseCommand("ev u32 a; u24 b")
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Offset != 10 {
		t.Fatalf("err %v offset %+v, want offset 10", err, ce)
	}
}

func TestValidName(t *testing.T) {
	for s, want := range map[string]bool{"a": true, "_x9": true, "A_b": true, "": false, "9a": false, "a.b": false, "a/b": false, "a b": false, "..": false} {
		if ValidName(s) != want {
			t.Errorf("ValidName(%q) = %v", s, !want)
		}
	}
}
