package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/mmiotrace"
)

// TestBuildDefaultBadLineIsLoss: Build with the zero Options, as a
// library user calls it, on an mmiotrace log with a line that does not
// parse in its middle summarises the log as 'iotap report' does: the
// line is skipped and counted as loss, and every R/W line of the log
// (counted here by its first field) is in the counts and in the BAR
// series. MMIOOptions.StopAtBadLine fails at it instead, naming its line.
func TestBuildDefaultBadLineIsLoss(t *testing.T) {
	b, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	var rw int64
	for _, l := range lines {
		if strings.HasPrefix(l, "R ") || strings.HasPrefix(l, "W ") {
			rw++
		}
	}
	mid := len(lines) / 2
	bad := strings.Join(lines[:mid], "") + "R 4 12.5 1 not-an-address 0x0 0x0 0\n" + strings.Join(lines[mid:], "")
	path := filepath.Join(t.TempDir(), "bad.log")
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Build(context.Background(), []string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Traces) != 1 || r.Traces[0].MMIO == nil {
		t.Fatalf("traces: %+v", r.Traces)
	}
	tr := r.Traces[0]
	st := tr.MMIO.Stats
	if tr.Err != nil || st.Skipped != 1 || !strings.Contains(tr.Loss, "1 bad lines skipped") {
		t.Errorf("zero Options: Err %v, skipped %d, loss %q; want no error, 1 bad line skipped as loss", tr.Err, st.Skipped, tr.Loss)
	}
	if got := st.Kinds[mmiotrace.KindRead] + st.Kinds[mmiotrace.KindWrite]; got != rw {
		t.Errorf("zero Options: %d accesses counted, the log has %d R/W lines", got, rw)
	}
	var inSeries float64
	for _, bar := range tr.MMIO.BARs {
		inSeries += bar.Accesses.Total()
	}
	if inSeries != float64(rw) {
		t.Errorf("zero Options: %v accesses in the BAR series, want %d", inSeries, rw)
	}
	if l := r.LossError(); !strings.Contains(l, path) {
		t.Errorf("LossError %q does not name %s", l, path)
	}

	r2, err := Build(context.Background(), []string{path}, Options{MMIO: MMIOOptions{StopAtBadLine: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	want := fmt.Sprintf("line %d", mid+1)
	if len(r2.Traces) != 1 || r2.Traces[0].Err == nil || !strings.Contains(r2.Traces[0].Err.Error(), want) {
		t.Errorf("StopAtBadLine: %+v, want an error naming %s", r2.Traces[0], want)
	}
}
