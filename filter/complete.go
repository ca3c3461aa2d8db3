package filter

import (
	"sort"
	"strings"
)

// Complete completes the field name being typed at the end of the
// expression expr (a shell completing -Y): every name or alias of fields
// that starts with it, as expr with the word replaced, a tab and the
// field's type ("number" or "string"), sorted.
func Complete(fields []FieldInfo, expr string) []string {
	// The field being typed starts after the last byte that cannot be
	// part of a name.
	i := strings.LastIndexFunc(expr, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.')
	})
	head, word := expr[:i+1], expr[i+1:]
	var out []string
	for _, f := range fields {
		for _, n := range append([]string{f.Name}, f.Aliases...) {
			if strings.HasPrefix(n, word) {
				out = append(out, head+n+"\t"+f.Type)
			}
		}
	}
	sort.Strings(out)
	return out
}
