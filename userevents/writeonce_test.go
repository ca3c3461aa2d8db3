package userevents

import (
	"testing"

	"github.com/iotap/iotap/userevents/eventheader"
)

// SchemaOf rebuilds, from the format file the lab kernel wrote for it,
// the schema the lab test registered (and the kernel's format matches it).
func TestSchemaOf(t *testing.T) {
	f, err := ParseFormat(readTestdata(t, "format_iotap_lab_pg.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := SchemaOf(f, "iotap_lab_pg")
	if err != nil {
		t.Fatal(err)
	}
	const registered = "iotap_lab_pg u32 a; s16 b; __rel_loc char[] s; char[6] c" // lab_linux_test.go
	if got := s.Command(); got != registered || !f.Matches(s) {
		t.Errorf("SchemaOf: %q, want %q (matches the format: %v)", got, registered, f.Matches(s))
	}
}

// EventHeaderEvent's schema is the tracepoint eventheader names, and its
// payload decodes (eventheader.Decode) to the event and values given.
func TestEventHeaderEvent(t *testing.T) {
	vals := []eventheader.Value{}
	for _, a := range []string{"status:u32=404", "path=/x"} {
		v, err := eventheader.ParseArg(a)
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, v)
	}
	s, payload, err := EventHeaderEvent("MyProvider", "Request", 4, 1, vals)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "MyProvider_L4K1" {
		t.Errorf("tracepoint %q", s.Name)
	}
	ev, err := eventheader.Decode(s.Name, payload)
	if err != nil {
		t.Fatal(err)
	}
	if ev.EventName != "Request" || len(ev.Fields) != 2 || ev.Fields[0].Name != "status" || ev.Fields[1].Name != "path" || ev.Header.Level != 4 {
		t.Errorf("decoded %+v", ev)
	}
	if _, _, err := EventHeaderEvent("P", "E", 4, 1, []eventheader.Value{{}}); err == nil {
		t.Error("a value without a type was laid out")
	}
}
