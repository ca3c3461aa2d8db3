package userevents

import (
	"errors"
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
