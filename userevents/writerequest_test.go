package userevents

import (
	"errors"
	"strings"
	"testing"
)

// WriteRequest.Check and EventHeaderArgs refuse bad arguments before the
// kernel, as *ArgError naming the argument, and lay out good ones.
func TestWriteRequestArgs(t *testing.T) {
	s, err := ParseCommand("ev u8 a; char[4] s")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		req      WriteRequest
		arg, msg string
	}{
		{WriteRequest{Name: "bad/name"}, "name", `bad event name "bad/name"`},
		{WriteRequest{Name: "other", Schema: s}, "name", `the schema names "ev", not "other"`},
		{WriteRequest{Name: "ev", Schema: s, Args: []string{"a=256"}}, "value", ""},
		{WriteRequest{Name: "ev", Schema: s, Args: []string{"s=toolong"}}, "value", ""},
		{WriteRequest{Name: "ev", Schema: s, Args: []string{"b=1"}}, "value", ""},
		{WriteRequest{Name: "ev", Schema: s, Args: []string{"novalue"}}, "value", `"novalue": want field=value`},
	} {
		err := tc.req.Check()
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Arg != tc.arg || (tc.msg != "" && err.Error() != tc.msg) {
			t.Errorf("%+v: %v (%#v), want an ArgError of %s %q", tc.req, err, ae, tc.arg, tc.msg)
		}
	}
	ok := WriteRequest{Name: "ev", Schema: s, Args: []string{"a=7", "s=hi"}}
	if err := ok.Check(); err != nil || len(ok.vals) != 2 {
		t.Errorf("good request: %v, values %v", err, ok.vals)
	}
	// Without a schema only the name can be checked before the kernel.
	if err := (&WriteRequest{Name: "ev", Args: []string{"anything"}}).Check(); err != nil {
		t.Errorf("registered event: %v", err)
	}

	for _, tc := range []struct {
		name     string
		level    uint8
		args     []string
		arg, msg string
	}{
		{"NoEvent", 4, nil, "name", `"NoEvent" is not PROVIDER:EVENT`},
		{":Ev", 4, nil, "name", `":Ev" is not PROVIDER:EVENT`},
		{"P:Ev", 0, nil, "level", "level 0 is not a level (1..255)"},
		{"P:Ev", 4, []string{"x:u99=1"}, "value", ""},
	} {
		_, _, err := EventHeaderArgs(tc.name, tc.level, 1, tc.args)
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Arg != tc.arg || (tc.msg != "" && err.Error() != tc.msg) {
			t.Errorf("EventHeaderArgs(%q, %d, %q): %v, want an ArgError of %s %q", tc.name, tc.level, tc.args, err, tc.arg, tc.msg)
		}
	}
}

// Register and EventHeader: the request is laid out by Check, and its
// mistakes are worded with the flags of 'iotap events write'.
func TestWriteRequestFlags(t *testing.T) {
	r := WriteRequest{Name: "ev", Register: "ev u8 a", Args: []string{"a=7"}}
	if err := r.Check(); err != nil || r.Schema == nil || r.Schema.Command() != "ev u8 a" || len(r.vals) != 1 || r.Tracepoint() != "ev" {
		t.Errorf("--register: %v, %+v", err, r)
	}
	h := WriteRequest{Name: "P:Ev", EventHeader: true, Level: 4, Keyword: 1, Args: []string{"n:u8=5"}}
	if err := h.Check(); err != nil || h.Tracepoint() != "P_L4K1" || len(h.payload) == 0 {
		t.Errorf("--eventheader: %v, tracepoint %q, %d payload bytes", err, h.Tracepoint(), len(h.payload))
	}
	for _, tc := range []struct {
		req      WriteRequest
		arg, msg string
	}{
		{WriteRequest{Name: "x", Register: "x u99 y"}, "register", `--register: userevents: bad command at byte 2: field "u99 y": unknown type "u99"`},
		{WriteRequest{Name: "x", Register: "y u32 a"}, "register", `--register names "y", not "x"`},
		{WriteRequest{Name: "nocolon", EventHeader: true, Level: 4}, "name", `--eventheader: "nocolon" is not PROVIDER:EVENT`},
		{WriteRequest{Name: "P:E", EventHeader: true}, "level", "--level 0 is not a level (1..255)"},
		{WriteRequest{Name: "P:E", EventHeader: true, Level: 4, Args: []string{"n:u8=300"}}, "value", `eventheader: field "n": "300" is not a u8`},
	} {
		err := tc.req.Check()
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Arg != tc.arg || !strings.HasPrefix(err.Error(), tc.msg) {
			t.Errorf("%+v: %v, want an ArgError of %s %q", tc.req, err, tc.arg, tc.msg)
		}
	}
}
