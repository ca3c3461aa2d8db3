package userevents

import (
	"errors"
	"strings"
	"testing"
)

// The line 'iotap events register' prints says the tracepoint and, only
// when the kernel did not keep Persist, that the event is not persistent.
func TestRegistered(t *testing.T) {
	req := RegisterRequest{Command: "req u32 id;  char[8]   tag"}
	if err := req.Check(); err != nil {
		t.Fatal(err)
	}
	r := Registered{Schema: req.schema, System: System, Name: "req", Flags: Persist}
	if got, want := r.String(), "registered req u32 id; char[8] tag as user_events/req"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	r.Flags = MultiFormat
	if got := r.String(); !strings.HasSuffix(got, "/req (not persistent: gone when nothing uses it)") {
		t.Errorf("without Persist: %q", got)
	}
}

// Bad commands and names are *ArgError, found before the kernel (a nil
// tracefs is never touched).
func TestRegisterDeleteArgs(t *testing.T) {
	for _, c := range []struct {
		err  error
		arg  string
		text string
	}{
		{(&RegisterRequest{Command: "req u32"}).Check(), "register", ""},
		{func() error { _, err := (&RegisterRequest{Command: "bad/name u32 a"}).Register(nil); return err }(), "register", ""},
		{CheckName("bad/name"), "name", `bad event name "bad/name"`},
		{Delete(nil, "bad name"), "name", `bad event name "bad name"`},
	} {
		var ae *ArgError
		if !errors.As(c.err, &ae) || ae.Arg != c.arg || !strings.Contains(c.err.Error(), c.text) {
			t.Errorf("%v: want an ArgError %q saying %q", c.err, c.arg, c.text)
		}
	}
	if err := CheckName("iotap_marker"); err != nil {
		t.Errorf("a valid name: %v", err)
	}
}
