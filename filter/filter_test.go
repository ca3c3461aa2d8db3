package filter

import (
	"errors"
	"strings"
	"testing"
)

type rec struct {
	ep     uint8
	status int32
	name   string
	setup  bool
	req    uint8
	addr   uint64
}

var testTable = func() *Table[rec] {
	t := NewTable(
		Field[rec]{Name: "usb.endpoint_address", Num: func(r *rec) (Int, bool) { return Uint(uint64(r.ep)), true }},
		Field[rec]{Name: "usb.urb_status", Num: func(r *rec) (Int, bool) { return Signed(int64(r.status)), true },
			Names: func(s string) (Int, bool) {
				if s == "EPIPE" {
					return Signed(-32), true
				}
				return Int{}, false
			}, NameList: []string{"EPIPE"}},
		Field[rec]{Name: "usb.name", Str: func(r *rec) (string, bool) { return r.name, r.name != "" }},
		Field[rec]{Name: "usb.setup.bRequest", Num: func(r *rec) (Int, bool) { return Uint(uint64(r.req)), r.setup }},
		Field[rec]{Name: "mmio.addr", Num: func(r *rec) (Int, bool) { return Uint(r.addr), true }},
	)
	t.Alias("usb.ep", "usb.endpoint_address")
	t.Alias("usb.status", "usb.urb_status")
	return t
}()

func TestEval(t *testing.T) {
	recs := []rec{
		{ep: 0x81, status: 0, name: "kbd"},
		{ep: 0x81, status: -32, name: "kbd"},
		{ep: 0x02, status: -115, setup: true, req: 6},
		{ep: 0x00, status: 0, setup: true, req: 9, addr: 0xffffffff81000000},
	}
	cases := []struct {
		expr string
		want string // indexes of the records selected
	}{
		{"usb.ep == 0x81", "01"},
		{"usb.ep == 0x81 && usb.status != 0", "1"},
		{"usb.endpoint_address eq 129 and not usb.urb_status == 0", "1"},
		{"usb.status < 0", "12"},
		{"usb.status <= -32", "12"},
		{"usb.status >= -32", "013"},
		{"usb.status > -115", "013"},
		{`usb.status == "EPIPE"`, "1"},
		{"usb.setup.bRequest", "23"},
		{"!usb.setup.bRequest", "01"},
		{"usb.setup.bRequest == 6", "2"},
		// absent field: == and != are false, as in tshark; !(==) is true
		{"usb.setup.bRequest != 6", "3"},
		{"!(usb.setup.bRequest == 6)", "013"},
		{"usb.setup.bRequest < 100", "23"},
		{`usb.name == "kbd"`, "01"},
		{`usb.name != "kbd"`, ""},
		{`usb.name != "mouse"`, "01"},
		{`usb.name contains "b"`, "01"},
		{`usb.name > "a"`, "01"},
		{"(usb.ep == 0 || usb.ep == 2) && usb.setup.bRequest == 9", "3"},
		{"usb.ep == 0 || usb.ep == 2 && usb.setup.bRequest == 9", "3"}, // && binds tighter
		{"!(usb.ep == 0x81)", "23"},
		{"!!(usb.ep == 0x81)", "01"},
		{"mmio.addr == 0xffffffff81000000", "3"},
		{"mmio.addr > -1", "0123"},
		{"mmio.addr > 0x7fffffffffffffff", "3"},
		{"usb.ep == usb.ep", "0123"},
		{"usb.ep > usb.status", "012"},
		{"usb.ep == 0b10", "2"},
		{"usb.ep == 0o201", "01"},
		{"usb.ep == '\\x81'", "01"},
	}
	for _, c := range cases {
		p, err := ParseCompile(c.expr, testTable)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		var got strings.Builder
		for i := range recs {
			if p(&recs[i]) {
				got.WriteByte(byte('0' + i))
			}
		}
		if got.String() != c.want {
			t.Errorf("%s: selects %q, want %q", c.expr, got.String(), c.want)
		}
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		expr string
		pos  int
		msg  string
	}{
		{"", 0, "empty"},
		{"usb.ep = 1", 7, `"=" is not an operator`},
		{"usb.ep == 1 & usb.ep == 2", 12, `use "&&"`},
		{"usb.ep ==", 9, "want a field, number or string"},
		{"(usb.ep == 1", 12, `want ")"`},
		{"usb.ep == 1)", 11, "unexpected"},
		{"usb.nope == 1", 0, `unknown field "usb.nope"`},
		{`usb.ep == "x"`, 10, "is a string"},
		{`usb.name == 3`, 12, "is a string but 3 is a number"},
		{`usb.status == "EBUSY"`, 14, "not a value of usb.urb_status (want EPIPE"},
		{`usb.ep contains 1`, 7, "contains compares strings"},
		{"usb.ep == 0x1g", 10, "bad number"},
		{"usb.ep == 99999999999999999999", 10, "bad number"},
		{`usb.name == "abc`, 12, "string not closed"},
		{"usb.ep == 'ab'", 10, "bad character"},
		{"3", 0, "alone is not a test"},
		{"usb.ep == 1 $", 12, "unexpected character"},
		{"usb. == 1", 0, "bad field name"},
		{strings.Repeat("(", 300) + "usb.ep" + strings.Repeat(")", 300), 257, "nested"},
	}
	for _, c := range cases {
		_, err := ParseCompile(c.expr, testTable)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v, want a *SyntaxError", c.expr, err)
			continue
		}
		if se.Pos != c.pos || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("%q: error at %d %q, want at %d containing %q", c.expr, se.Pos, se.Msg, c.pos, c.msg)
		}
	}
}

func TestStringRoundTrip(t *testing.T) {
	for _, s := range []string{
		"usb.ep == 0x81 && usb.status != 0",
		`!(a.b contains "x\"y") || c >= -5 and d`,
		"a == 'S' or not (b lt 3 && c)",
	} {
		e, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		e2, err := Parse(e.String())
		if err != nil {
			t.Fatalf("%s: canonical %q does not parse: %v", s, e.String(), err)
		}
		if e2.String() != e.String() {
			t.Errorf("%s: %q then %q", s, e.String(), e2.String())
		}
	}
}

func TestIntCmp(t *testing.T) {
	vals := []Int{Signed(-1 << 63), Signed(-2), Signed(-1), Uint(0), Uint(1), Uint(1 << 63), Uint(^uint64(0))}
	for i, a := range vals {
		for j, b := range vals {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := a.Cmp(b); got != want {
				t.Errorf("%v cmp %v = %d, want %d", a, b, got, want)
			}
		}
	}
}

// FuzzParse: any text parses or fails with a position inside it; what
// parses prints a canonical form that parses to itself, and compiles and
// runs without panicking.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"usb.ep == 0x81 && usb.status != 0", `usb.name contains "k"`, "!(usb.setup.bRequest)",
		"usb.ep == 'S' or not usb.ep lt -3", `usb.status == "EPIPE"`, "((a))", "a == 0b101 || b <= 0o7",
		`"x" == usb.name`, "usb.ep == 1 &&", "usb.ep === 3", "(((", `'\x41' == usb.ep`,
	} {
		f.Add(s)
	}
	recs := []rec{{ep: 0x81, name: "kbd"}, {setup: true, req: 6, status: -32}}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Pos < 0 || se.Pos > len(s) {
				t.Fatalf("%q: error %v without a position inside the text", s, err)
			}
			return
		}
		c := e.String()
		e2, err := Parse(c)
		if err != nil || e2.String() != c {
			t.Fatalf("%q: canonical %q reparses as %v, %v", s, c, e2, err)
		}
		p, err := Compile(e, testTable)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Pos < 0 || se.Pos > len(s) {
				t.Fatalf("%q: compile error %v without a position", s, err)
			}
			return
		}
		for i := range recs {
			p(&recs[i])
		}
	})
}
