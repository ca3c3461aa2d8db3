package cut

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/mmiotrace"
)

// stampUS is the stamp of an R/W line of a log in microseconds (parsed
// here from the text, not by mmiotrace), ok false for other lines.
func stampUS(t *testing.T, line string) (int64, bool) {
	f := strings.Fields(line)
	if len(f) < 3 || (f[0] != "R" && f[0] != "W") {
		return 0, false
	}
	sec, frac, _ := strings.Cut(f[2], ".")
	s, err1 := strconv.ParseInt(sec, 10, 64)
	u, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil || len(frac) != 6 {
		t.Fatalf("stamp of %q", line)
	}
	return s*1e6 + u, true
}

// accessesIn are the R/W lines of log whose stamp is in [from, to) µs,
// and how many of them are writes.
func accessesIn(t *testing.T, log string, from, to int64) (lines []string, writes int64) {
	for _, l := range strings.Split(log, "\n") {
		if us, ok := stampUS(t, l); ok && us >= from && us < to {
			lines = append(lines, l)
			if l[0] == 'W' {
				writes++
			}
		}
	}
	return lines, writes
}

// withStdin runs f with os.Stdin reading the file at path.
func withStdin(t *testing.T, path string, f func()) {
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	old := os.Stdin
	os.Stdin = in
	defer func() { os.Stdin = old }()
	f()
}

// OpenLog's Filter keeps exactly the accesses of the window, whether the
// log is a file (cut) or standard input (kept by stamps), and says the
// log's format; Replay dry-runs exactly the window's writes.
func TestOpenLogWindow(t *testing.T) {
	const path = "../testdata/mmiotrace/e1000-probe.log"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, writes := accessesIn(t, string(data), 12_250_000, 12_253_500)
	if len(want) < 10 || writes == 0 {
		t.Fatalf("window too small for a test: %d accesses, %d writes", len(want), writes)
	}
	spec, err := timerange.ParseSpec("@12.25", "@12.2535")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{path, "-"} {
		var out bytes.Buffer
		var st mmiotrace.FilterStats
		var lost []string
		var format string
		filter := func() {
			l, oerr := OpenLog(ctx, name, LogOptions{Window: spec, Stamps: true})
			if oerr != nil {
				t.Fatalf("%s: %v", name, oerr)
			}
			defer l.Close()
			if l.File != name {
				t.Errorf("%s: File %q", name, l.File)
			}
			format = l.Format
			st, lost, err = l.Filter(ctx, &out, &mmiotrace.Filter{}, mmiotrace.FilterOptions{})
		}
		if name == "-" {
			withStdin(t, path, filter)
		} else {
			filter()
		}
		if format != "mmiotrace log" {
			t.Errorf("%s: Format %q", name, format)
		}
		if err != nil || len(lost) != 0 {
			t.Fatalf("%s: Filter: %v, lost %q", name, err, lost)
		}
		got, _ := accessesIn(t, out.String(), 0, 1<<62)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: kept %d accesses, want the window's %d:\n%s", name, len(got), len(want), strings.Join(got, "\n"))
		}
		if st.Kept == 0 || !strings.HasPrefix(out.String(), "VERSION ") {
			t.Errorf("%s: kept %d lines, output starts %.20q", name, st.Kept, out.String())
		}
	}

	// Replay of the window (a file: cut) dry-runs its writes alone.
	l, err := OpenLog(ctx, path, LogOptions{Window: spec})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a := mmiotrace.ReplayArgs{DryRun: true}
	opt, err := a.Options()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	st, err := l.Replay(ctx, &a, opt, mmiotrace.NewReplayPrinter(&out, true))
	if err != nil {
		t.Fatal(err)
	}
	if st.Writes != writes || len(st.Loss) != 0 {
		t.Errorf("replayed %d writes (loss %q), want %d", st.Writes, st.Loss, writes)
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	if !strings.Contains(first, `"kind":"input"`) || !strings.Contains(first, `"format":"mmiotrace log"`) || !strings.Contains(first, filepath.Base(path)) {
		t.Errorf("first record %s", first)
	}
}

// Standard input takes @T ends only with Stamps, and is refused without.
func TestOpenLogStdinErrors(t *testing.T) {
	const path = "../testdata/mmiotrace/e1000-probe.log"
	ctx := context.Background()
	rel, _ := timerange.ParseSpec("0.5", "")
	withStdin(t, path, func() {
		_, err := OpenLog(ctx, "-", LogOptions{Window: rel, Stamps: true})
		var we *WindowError
		if !errors.As(err, &we) || !errors.Is(err, ErrWindowNeedsFile) {
			t.Errorf("relative window of stdin: %v", err)
		}
		abs, _ := timerange.ParseSpec("@12.9", "")
		if _, err := OpenLog(ctx, "-", LogOptions{Window: abs}); err == nil || !strings.Contains(err.Error(), "standard input") {
			t.Errorf("stdin window without Stamps: %v", err)
		}
	})
}

// Loss says what the log lost, once, whole or cut.
func TestOpenLogLoss(t *testing.T) {
	data, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	// The log ends inside its last line.
	cutAt := bytes.LastIndexByte(data[:len(data)-1], '\n') + 10
	p := filepath.Join(t.TempDir(), "cut.log")
	if err := os.WriteFile(p, data[:cutAt], 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	whole, _ := OpenLog(ctx, p, LogOptions{})
	_, lost, err := whole.Filter(ctx, &bytes.Buffer{}, &mmiotrace.Filter{}, mmiotrace.FilterOptions{})
	whole.Close()
	if err != nil || len(lost) != 1 || !strings.Contains(lost[0], "the log is cut") {
		t.Errorf("whole log: %v, lost %q", err, lost)
	}
	spec, _ := timerange.ParseSpec("@12.9", "")
	win, err := OpenLog(ctx, p, LogOptions{Window: spec})
	if err != nil {
		t.Fatal(err)
	}
	_, lost, err = win.Filter(ctx, &bytes.Buffer{}, &mmiotrace.Filter{}, mmiotrace.FilterOptions{})
	win.Close()
	if err != nil || len(lost) != 1 || !strings.Contains(lost[0], "the log is cut") {
		t.Errorf("window: %v, lost %q", err, lost)
	}
	a := mmiotrace.ReplayArgs{DryRun: true}
	opt, _ := a.Options()
	if win, err = OpenLog(ctx, p, LogOptions{Window: spec}); err != nil {
		t.Fatal(err)
	}
	st, err := win.Replay(ctx, &a, opt, mmiotrace.NewReplayPrinter(&bytes.Buffer{}, false))
	win.Close()
	if err != nil || len(st.Loss) != 1 || !strings.Contains(st.Loss[0], "the log is cut") {
		t.Errorf("replay of the window: %v, lost %q", err, st.Loss)
	}
}

// TestLogFilterNamesBadLine: Log.Filter's error for a bad line names the
// log, as 'iotap mmio stats' names it; it said "mmiotrace: line 21: ..."
// with no file.
func TestLogFilterNamesBadLine(t *testing.T) {
	b, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(b, []byte("\n"))
	lines[20] = bytes.Repeat([]byte("x"), mmiotrace.DefaultMaxLine+1)
	p := filepath.Join(t.TempDir(), "long.log")
	if err := os.WriteFile(p, bytes.Join(lines, []byte("\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := OpenLog(context.Background(), p, LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f := &mmiotrace.Filter{Between: [2]string{"a", "b"}} // read record by record
	_, _, err = l.Filter(context.Background(), io.Discard, f, mmiotrace.FilterOptions{})
	if want := p + ": mmiotrace: line 21: bad mmiotrace line: line longer than"; err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, mmiotrace.ErrFormat) {
		t.Errorf("%v; want %q...", err, want)
	}
}
