package timeline

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/timerange"
)

// --from/--to on the timeline: the events drawn are those gawk counts in
// the window (relative to the first timed record, by marker, by @T).
func TestExportWindow(t *testing.T) {
	if _, err := exec.LookPath("gawk"); err != nil {
		t.Skip("gawk not installed (apt install gawk)")
	}
	const log = "../testdata/mmiotrace/e1000-probe.log"
	const first = 11.829418 // the first timed record (a MARK)
	for _, w := range []struct {
		from, to string
		lo, hi   float64 // the window in the log's seconds
	}{
		{"0.4", "0.5", first + 0.4, first + 0.5},
		{"mark:vmlab: unbind", "+0.2", 11.829418, 12.029418},
		{"@0.45", "", first + 0.45, 1e9}, // @ is the timeline's own time: 0 is the first event
	} {
		spec, err := timerange.ParseSpec(w.from, w.to)
		if err != nil {
			t.Fatal(err)
		}
		st, err := Export(context.Background(), io.Discard, []string{log}, Options{Window: spec})
		if err != nil {
			t.Fatalf("%s..%s: %v", w.from, w.to, err)
		}
		prog := fmt.Sprintf(`{ t = ($1 == "R" || $1 == "W" || $1 == "UNKNOWN") ? $3 : ($1 == "MARK" || $1 == "MAP" || $1 == "UNMAP") ? $2 : -1 }
			t != -1 && t + 0 >= %.6f && t + 0 < %.6f { n++ } END { print n + 0 }`, w.lo, w.hi)
		out, err := exec.Command("gawk", prog, log).Output()
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSpace(string(out))
		if got := fmt.Sprint(st.Inputs[0].Events); got != want || want == "0" {
			t.Errorf("%s..%s: %s events drawn, gawk counts %s", w.from, w.to, got, want)
		}
	}
}
