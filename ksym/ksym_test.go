package ksym

import (
	"errors"
	"strings"
	"testing"
)

const sampleKallsyms = `ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81000000 t __pfx_startup_64
ffffffff81000100 T startup_64
ffffffff81000200 D some_data
ffffffff81300000 T last_kernel_func
ffffffffc0010000 t e1000_probe	[e1000x]
ffffffffc0010400 t e1000_reset_hw	[e1000x]
ffffffffc0010800 W weak_func	[e1000x]
ffffffffc0020100 t other_func	[other]
`

const sampleModules = `e1000x 8192 0 - Live 0xffffffffc0010000
other 4096 0 - Live 0xffffffffc0020000 (OE)
`

func TestLookup(t *testing.T) {
	tab, err := Load(strings.NewReader(sampleKallsyms), strings.NewReader(sampleModules))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		addr uint64
		want string
	}{
		{0xffffffff81000000, "_stext+0x0"},
		{0xffffffff810000ff, "_stext+0xff"},
		{0xffffffff81000100, "startup_64+0x0"},
		{0xffffffff81000210, "startup_64+0x110"}, // data symbols are not code
		{0xffffffff81300010, "last_kernel_func+0x10"},
		{0xffffffff81300000 + 1<<20, ""}, // too far past the last kernel symbol
		{0xffffffffc001041c, "e1000_reset_hw+0x1c [e1000x]"},
		{0xffffffffc0010900, "weak_func+0x100 [e1000x]"},
		{0xffffffffc0012000, ""}, // past the module's size
		{0xffffffffc0020010, ""}, // in other, below its first symbol
		{0xffffffffc0020104, "other_func+0x4 [other]"},
		{0xffffffff80000000, ""},
		{0, ""},
	} {
		if got := tab.Name(c.addr); got != c.want {
			t.Errorf("Name(%#x) = %q, want %q", c.addr, got, c.want)
		}
	}
	if m, ok := tab.Module(0xffffffffc0010abc); !ok || m.Name != "e1000x" || m.Size != 8192 {
		t.Errorf("Module: %+v %v", m, ok)
	}
	if tab.Len() != 7 {
		t.Errorf("Len = %d, want 7 text addresses", tab.Len())
	}
}

func TestHidden(t *testing.T) {
	k := "0000000000000000 T _text\n0000000000000000 t e1000_probe\t[e1000]\n"
	m := "e1000 8192 0 - Live 0x0000000000000000\n"
	tab, err := Load(strings.NewReader(k), strings.NewReader(m))
	if !errors.Is(err, ErrHidden) || tab == nil || tab.Len() != 0 {
		t.Fatalf("Load of zeroed kallsyms: %v %v", tab, err)
	}
	if !strings.Contains(err.Error(), "kptr_restrict") {
		t.Errorf("message does not say why: %v", err)
	}
	syms, err := ParseKallsyms(strings.NewReader(k))
	if len(syms) != 2 || !errors.Is(err, ErrHidden) {
		t.Errorf("ParseKallsyms: %d symbols, %v", len(syms), err)
	}
}

func TestSyntaxErrors(t *testing.T) {
	for _, c := range []struct{ file, in, want string }{
		{"kallsyms", "ffffffff81000000 T a\nzz T b\n", "kallsyms line 2: bad address"},
		{"kallsyms", "ffffffff81000000 TT a\n", "line 1: bad type"},
		{"kallsyms", "ffffffff81000000 T a e1000\n", "bad module tag"},
		{"kallsyms", "ffffffff81000000 T\n", "got 2 fields"},
		{"modules", "e1000 x 0 - Live 0x1\n", "modules line 1: bad size"},
		{"modules", "e1000 1 0 - Live 1\n", "bad address"},
		{"modules", "\ne1000 1 0 -\n", "modules line 2: want"},
	} {
		var err error
		if c.file == "kallsyms" {
			_, err = ParseKallsyms(strings.NewReader(c.in))
		} else {
			_, err = ParseModules(strings.NewReader(c.in))
		}
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: %v, want %q", c.file, c.in, err, c.want)
		}
	}
}

func FuzzParseKallsyms(f *testing.F) {
	f.Add([]byte(sampleKallsyms), []byte(sampleModules))
	f.Add([]byte("0000000000000000 T _text\n"), []byte("a 1 0 - Live 0x0\n"))
	f.Fuzz(func(t *testing.T, k, m []byte) {
		tab, err := Load(strings.NewReader(string(k)), strings.NewReader(string(m)))
		if err != nil && !errors.Is(err, ErrHidden) {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 {
				t.Fatalf("error without a position: %v", err)
			}
			return
		}
		for _, a := range []uint64{0, 1, 0xffffffff81000000, 0xffffffffc0010404, ^uint64(0)} {
			if l, ok := tab.Lookup(a); ok && (l.Func == "" || l.Offset > a) {
				t.Fatalf("Lookup(%#x) = %+v", a, l)
			}
		}
	})
}
