package report

import (
	"reflect"
	"strings"
	"testing"
)

// TestOutputKinds: each -o file's kind by its extension, any case, or by
// --format for a single file; a format for several files, an unknown
// format and an extension naming no kind are errors that say so.
func TestOutputKinds(t *testing.T) {
	for _, c := range []struct {
		paths  []string
		format string
		want   []string
		err    string
	}{
		{[]string{"a.HTML", "b.pftrace", "c.perfetto-trace", "d.ndjson", "e.json", "f.htm"}, "", []string{"html", "perfetto", "perfetto", "json", "json", "html"}, ""},
		{[]string{"-"}, "html", []string{"html"}, ""},
		{[]string{"out"}, "perfetto", []string{"perfetto"}, ""},
		{nil, "", []string{}, ""},
		{[]string{"a.html", "b"}, "json", nil, "--format applies to a single -o"},
		{[]string{"out"}, "pdf", nil, `--format "pdf": want html, perfetto or json`},
		{[]string{"out.txt"}, "", nil, "-o out.txt: unknown kind of output"},
	} {
		got, err := OutputKinds(c.paths, c.format)
		if c.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.err) {
				t.Errorf("%q --format %q: %v, want %q", c.paths, c.format, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q --format %q: %q, %v; want %q", c.paths, c.format, got, err, c.want)
		}
	}
}
