package filter

import (
	"strings"
	"testing"
)

type pkt struct {
	Port uint16
	Host string
}

// Every completion is a field the table compiles (with a comparison of
// its type appended), and every field name starting with the word typed is
// offered, after whatever precedes the word.
func TestComplete(t *testing.T) {
	fields := NewTable(
		Field[pkt]{Name: "tcp.port", Num: func(p *pkt) (Int, bool) { return Uint(uint64(p.Port)), true }},
		Field[pkt]{Name: "tcp.srcport", Num: func(p *pkt) (Int, bool) { return Uint(uint64(p.Port)), true }},
		Field[pkt]{Name: "http.host", Str: func(p *pkt) (string, bool) { return p.Host, true }},
	)
	fields.Alias("tcp.dport", "tcp.port")
	for _, c := range []struct {
		expr string
		want int
	}{
		{"tcp.", 3}, {"tcp.port == 1 && (http", 1}, {"", 4}, {"tcp.d", 1}, {"x", 0}, {"!tcp.s", 1},
	} {
		got := Complete(fields.Fields(), c.expr)
		if len(got) != c.want {
			t.Errorf("%q: %q, want %d completions", c.expr, got, c.want)
		}
		for _, g := range got {
			expr, typ, _ := strings.Cut(g, "\t")
			rhs := " == 1"
			if typ == "string" {
				rhs = ` == "a"`
			}
			if strings.Count(expr, "(") > strings.Count(expr, ")") {
				rhs += ")"
			}
			if _, err := ParseCompile(expr+rhs, fields); err != nil || !strings.HasPrefix(expr, c.expr[:strings.LastIndexAny(c.expr, " (!&|")+1]) {
				t.Errorf("%q: completion %q: %v", c.expr, g, err)
			}
		}
	}
}
