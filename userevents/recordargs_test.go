package userevents

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/rotate"
)

// FileOptions parses the targets (a schema for 'NAME FIELDS', none for
// a bare NAME), builds the ring of files and the interval, keeps the
// rest; each bad argument is an *ArgError naming what is wrong.
func TestRecordArgs(t *testing.T) {
	a := RecordArgs{
		Lines:    RecordLinesOptions{JSON: true, BufferKB: 8, Count: 5},
		Path:     "ev.ndjson",
		Targets:  []string{"req u32 id; char[8] tag", "iotap_marker"},
		Duration: time.Minute,
		Rotate:   rotate.Args{FileSize: "1M", Ring: 3, Interval: time.Second},
	}
	o, err := a.FileOptions()
	if err != nil {
		t.Fatal(err)
	}
	ev := o.Lines.Events
	if len(ev) != 2 || ev[0].Name != "req" || ev[0].Schema == nil || len(ev[0].Schema.Fields) != 2 || ev[1].Name != "iotap_marker" || ev[1].Schema != nil {
		t.Errorf("events %+v", ev)
	}
	if o.Path != "ev.ndjson" || o.Duration != time.Minute || !o.Lines.JSON || o.Lines.BufferKB != 8 || o.Lines.Count != 5 || o.Lines.Interval != time.Second {
		t.Errorf("options %+v", o)
	}
	if r := o.Rotate; r == nil || r.Path != "ev.ndjson" || r.Size != 1<<20 || r.Files != 3 {
		t.Errorf("rotate %+v", r)
	}
	for _, c := range []struct {
		change   func(*RecordArgs)
		arg, msg string
	}{
		{func(a *RecordArgs) { a.Path = "" }, "output", "-o FILE is required (- for stdout)"},
		{func(a *RecordArgs) { a.Duration = -time.Second }, "duration", "--duration -1s: want 0 (no limit) or more"},
		{func(a *RecordArgs) { a.Targets = []string{"ev u32 a; u32 a"} }, "event", `"ev u32 a; u32 a": `},
		{func(a *RecordArgs) { a.Rotate = rotate.Args{Ring: 2} }, "rotate", "--ring 2 needs --file-size or --file-duration"},
		{func(a *RecordArgs) { a.Path = "-" }, "rotate", "--file-size/--file-duration write files"},
	} {
		b := a
		c.change(&b)
		_, err := b.FileOptions()
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Arg != c.arg || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: %v; want an *ArgError %s with %q", b, err, c.arg, c.msg)
		}
	}
}
