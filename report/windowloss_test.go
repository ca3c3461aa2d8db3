package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/timerange"
)

// A trace that ends inside a record records that loss in the report
// whatever the window (--from after its end, --to before the half
// record), as it does read whole: a log cut inside its last line and a
// pcapng capture killed inside a block. Oracle: the offset of the log's
// last newline, found here with bytes.
func TestBuildWindowKeepsTruncation(t *testing.T) {
	dir := t.TempDir()
	logData, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	logData = logData[:len(logData)-10]
	pcap, err := os.ReadFile("../testdata/usbmon/lab-capture.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	logPath, pcapPath := filepath.Join(dir, "cut.log"), filepath.Join(dir, "killed.pcapng")
	if err := os.WriteFile(logPath, logData, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pcapPath, pcap[:100000], 0o600); err != nil {
		t.Fatal(err)
	}
	lineAt := fmt.Sprintf("offset %d", bytes.LastIndexByte(logData, '\n')+1)
	for _, c := range []struct{ path, from, to, want string }{
		{logPath, "@13", "", lineAt},
		{logPath, "", "@12.9", lineAt},
		{pcapPath, "1000000", "", "ends inside a record"},
	} {
		spec, err := timerange.ParseSpec(c.from, c.to)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Build(context.Background(), []string{c.path}, Options{Window: spec, Warn: func(string) {}})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Traces) != 1 || r.Lossy() != 1 || !strings.Contains(r.Traces[0].Loss, c.want) {
			t.Errorf("%s %s..%s: traces %d, lossy %d, loss %q: want %q", c.path, c.from, c.to, len(r.Traces), r.Lossy(), r.Traces[0].Loss, c.want)
		}
		r.Close()
	}
}
