package cut_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/internal/timerange"
)

// A log cut inside its last line keeps that loss whatever the window a
// reader asks for: a window after the log's end (or one ending before
// the cut line) leaves the line out of the cut and says so, as the
// readers of the whole log do (the log is cut: exit 3); a window that
// starts after the last record says that it holds nothing. Oracle: the
// offset of the last newline of the file, found here with bytes, and
// the last stamp of the log (12.932823 s, its MARK line, read by eye).
func TestWindowOfCutLogSaysLossAndPastEnd(t *testing.T) {
	whole, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(whole, []byte("MARK 12.932823 vmlab: e1000 bound\n")) {
		t.Fatal("the log's last line changed: fix the oracle")
	}
	data := whole[:len(whole)-10] // inside the last line
	lineAt := int64(bytes.LastIndexByte(data, '\n') + 1)
	path := filepath.Join(t.TempDir(), "cut.log")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	wantLoss := fmt.Sprintf("offset %d", lineAt)
	for _, c := range []struct {
		from, to string
		pastEnd  bool
	}{
		{"@13", "", true},    // after the last record (12.930874, the cut line's time)
		{"100", "", true},    // relative: far after
		{"", "@12.9", false}, // before the end: the cut line is after the window
		{"@12.9305", "", false},
	} {
		spec, err := timerange.ParseSpec(c.from, c.to)
		if err != nil {
			t.Fatal(err)
		}
		name := c.from + ".." + c.to
		var warns []string
		warn := func(m string) { warns = append(warns, m) }
		pastEnd := func() bool {
			for _, w := range warns {
				if strings.Contains(w, "starts after the input's last record") && strings.HasPrefix(w, path+": ") {
					return true
				}
			}
			return false
		}
		inWindow := c.from == "@12.9305" // the cut line (at 12.930874) is in the window: kept in place, its reader says it
		// a reader's cut (mmio read, stats, filter: cut.OpenLog, a stream)
		l, err := cut.OpenLog(context.Background(), path, cut.LogOptions{Window: spec, Warn: warn})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := io.ReadAll(l)
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		loss := l.Loss(nil)
		if inWindow {
			if len(loss) != 0 || !bytes.HasSuffix(got, data[lineAt:]) {
				t.Errorf("%s: the cut line is in the window: want it kept in place, loss %q", name, loss)
			}
		} else if len(loss) != 1 || !strings.Contains(loss[0], wantLoss) {
			t.Errorf("%s: stream loss %q, want the line at %s lost", name, loss, wantLoss)
		}
		if pastEnd() != c.pastEnd {
			t.Errorf("%s: stream warnings %q: past the end said %v, want %v", name, warns, pastEnd(), c.pastEnd)
		}
		// a reader of the window's file (withWindow, report: cut.OpenWindow)
		warns = nil
		var ws cut.Windows
		if _, err := ws.Open(context.Background(), path, spec, warn); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tr := ws.Truncated()
		ws.Close()
		if inWindow != (tr == "") || !inWindow && !strings.Contains(tr, wantLoss) {
			t.Errorf("%s: Windows.Truncated %q, want the line at %s lost: %v", name, tr, wantLoss, !inWindow)
		}
		if pastEnd() != c.pastEnd {
			t.Errorf("%s: window warnings %q: past the end said %v, want %v", name, warns, pastEnd(), c.pastEnd)
		}
	}
}

// The same of a pcapng capture killed inside a block: a window after its
// end says so, and the half block stays a loss of the reader of the cut.
func TestWindowOfCutPcapngPastEnd(t *testing.T) {
	whole, err := os.ReadFile("../testdata/usbmon/lab-capture.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "killed.pcapng")
	if err := os.WriteFile(path, whole[:100000], 0o600); err != nil {
		t.Fatal(err)
	}
	spec, err := timerange.ParseSpec("1000000", "")
	if err != nil {
		t.Fatal(err)
	}
	var warns []string
	var ws cut.Windows
	defer ws.Close()
	if _, err := ws.Open(context.Background(), path, spec, func(m string) { warns = append(warns, m) }); err != nil {
		t.Fatal(err)
	}
	if ws.Truncated() == "" {
		t.Error("the half block is not said")
	}
	if !strings.Contains(strings.Join(warns, "\n"), path+": the window [1000000..) starts after the input's last record: 0 events kept") {
		t.Errorf("warnings %q do not say the window is past the end", warns)
	}
}
