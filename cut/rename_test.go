package cut

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRenameWriter: however the text is split into writes, what comes
// out is strings.ReplaceAll of the whole text (the oracle), the JSON
// form of a path with a quote renamed too.
func TestRenameWriter(t *testing.T) {
	w := &Windowed{Path: "/tmp/iotap-window-1/a\"b.log", input: "in/a\"b.log.zst", tmp: "/tmp/iotap-window-1"}
	r := NewRenamer(w)
	var text strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		switch rng.IntN(4) {
		case 0:
			text.WriteString(`{"file":"/tmp/iotap-window-1/a\"b.log"}` + "\n")
		case 1:
			text.WriteString("error: /tmp/iotap-window-1/a\"b.log: bad\n")
		case 2:
			text.WriteString(strings.Repeat("x", rng.IntN(3000)))
		default:
			text.WriteString("line " + string(rune('a'+i%26)) + "\n")
		}
	}
	src := text.String()
	want := strings.ReplaceAll(strings.ReplaceAll(src, `/tmp/iotap-window-1/a\"b.log`, `in/a\"b.log.zst`), "/tmp/iotap-window-1/a\"b.log", "in/a\"b.log.zst")
	for range 20 {
		var out bytes.Buffer
		rw := r.Writer(&out)
		for s := src; s != ""; {
			n := min(len(s), 1+rng.IntN(5000))
			if k, err := rw.Write([]byte(s[:n])); k != n || err != nil {
				t.Fatalf("Write: %d of %d, %v", k, n, err)
			}
			s = s[n:]
		}
		rw.Flush()
		if out.String() != want {
			t.Fatalf("renamed text differs (%d bytes, want %d)", out.Len(), len(want))
		}
	}
	if strings.Contains(want, "iotap-window") || !strings.Contains(want, `"file":"in/a\"b.log.zst"`) {
		t.Fatal("the oracle renames nothing")
	}
}
