package ndjson

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// LineLimit passes whole lines up to the limit, whatever the sizes of the
// writes after the input record, which it does not count.
func TestLineLimit(t *testing.T) {
	head := string(End(Input(nil, "usb", "f", "usbmon pcapng", "realtime")))
	in := head + "a\nbb\nccc\ndddd\n"
	for _, limit := range []uint64{1, 2, 4, 5} {
		for chunk := 1; chunk <= len(in); chunk++ {
			var out bytes.Buffer
			l := &LineLimit{W: &out, Left: limit}
			first := min(max(chunk, len(head)), len(in)) // the input record in one Write
			_, err := l.Write([]byte(in[:first]))
			for i := first; i < len(in) && err == nil; i += chunk {
				_, err = l.Write([]byte(in[i:min(i+chunk, len(in))]))
			}
			lines := strings.SplitAfter(in, "\n")
			n := min(int(limit)+1, len(lines)-1) // + the input record
			if want := strings.Join(lines[:n], ""); out.String() != want {
				t.Fatalf("limit %d, writes of %d: %q, want %q", limit, chunk, out.String(), want)
			}
			if limit < 4 && !errors.Is(err, ErrLimit) {
				t.Errorf("limit %d, writes of %d: error %v, want ErrLimit", limit, chunk, err)
			}
		}
	}
}
