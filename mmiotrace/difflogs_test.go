package mmiotrace

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestDiffLogReads: the lab log with a bad line and a kernel "Lost N
// events." mark inserted is read as 'mmio diff' reads a log: diffed with
// itself with --all --json, its reads and writes counted (the a_count of
// every record) are gawk's count of R and W lines, and Loss names the lost
// events and the skipped line with its number (gawk's NR of the bad line).
func TestDiffLogReads(t *testing.T) {
	gawk, err := exec.LookPath("gawk")
	if err != nil {
		t.Skip("gawk (the oracle) not installed")
	}
	data, err := os.ReadFile("testdata/e1000-bind.log")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	log := strings.Join(lines[:40], "") + "R 4 oops\nMARK 8.000000 Lost 7 events.\n" + strings.Join(lines[40:], "")
	gawkOut := func(prog string) int {
		cmd := exec.Command(gawk, prog)
		cmd.Stdin = strings.NewReader(log)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatalf("gawk printed %q", out)
		}
		return n
	}
	wantAcc := gawkOut(`/^[RW] [0-9]+ [0-9.]+ [0-9]+ 0x/ { n++ } END { print n }`)
	badLine := gawkOut(`$0 == "R 4 oops" { print NR }`)

	d := NewDiffLog(strings.NewReader(log), "a.log", "")
	var out bytes.Buffer
	if err := DiffLogs(&out, d, NewDiffLog(strings.NewReader(log), "b.log", ""), 0, DiffFormat{All: true, JSON: true}); err != nil {
		t.Fatal(err)
	}
	got := int64(0)
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r struct {
			Kind   string
			ACount int64 `json:"a_count"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		got += r.ACount
	}
	if got != int64(wantAcc) {
		t.Errorf("accesses: %d, gawk counts %d R/W lines", got, wantAcc)
	}
	loss := strings.Join(d.Loss, "; ")
	if !strings.Contains(loss, "7 lost events") || !strings.Contains(loss, "1 bad lines skipped") || !strings.Contains(loss, "line "+strconv.Itoa(badLine)) {
		t.Errorf("Loss = %q, want 7 lost events and 1 skipped line at line %d", loss, badLine)
	}
}

// TestDiffLogs: with JSON the output starts with the input records of both
// logs, in order, and the summary counts the accesses of each; two equal
// logs differ nowhere; an alignment over maxEdits is an error with no
// output.
func TestDiffLogs(t *testing.T) {
	data, err := os.ReadFile("testdata/e1000-bind.log")
	if err != nil {
		t.Fatal(err)
	}
	acc, err := Accesses(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	a := NewDiffLog(bytes.NewReader(data), "a.log", "")
	b := NewDiffLog(bytes.NewReader(data), "b.log.zst", "mmiotrace log, zstd")
	var out bytes.Buffer
	if err := DiffLogs(&out, a, b, 0, DiffFormat{JSON: true}); err != nil {
		t.Fatal(err)
	}
	recs := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(recs) != 3 {
		t.Fatalf("%d records, want 2 inputs and the summary:\n%s", len(recs), out.String())
	}
	for i, want := range []struct{ file, format string }{{"a.log", "mmiotrace log"}, {"b.log.zst", "mmiotrace log, zstd"}} {
		var in struct{ Kind, File, Format string }
		if err := json.Unmarshal([]byte(recs[i]), &in); err != nil {
			t.Fatal(err)
		}
		if in.Kind != "input" || in.File != want.file || in.Format != want.format {
			t.Errorf("record %d = %s, want the input record of %s (%s)", i, recs[i], want.file, want.format)
		}
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(recs[2]), &sum); err != nil {
		t.Fatal(err)
	}
	if sum["kind"] != "mmio_diff_summary" || sum["a_accesses"] != float64(len(acc)) || sum["same"] != float64(len(acc)) {
		t.Errorf("summary %s: want %d accesses, all the same", recs[2], len(acc))
	}

	// b with ten accesses of the other kind in its middle is more edits
	// than 1 allows: an error, and nothing written.
	lines := strings.SplitAfter(string(data), "\n")
	flipped := 0
	for i := len(lines) / 2; i < len(lines) && flipped < 10; i++ {
		if l := lines[i]; strings.HasPrefix(l, "R ") || strings.HasPrefix(l, "W ") {
			lines[i] = map[byte]string{'R': "W", 'W': "R"}[l[0]] + l[1:]
			flipped++
		}
	}
	out.Reset()
	a = NewDiffLog(bytes.NewReader(data), "a.log", "")
	b = NewDiffLog(strings.NewReader(strings.Join(lines, "")), "b.log", "")
	err = DiffLogs(&out, a, b, 1, DiffFormat{})
	if err == nil || err.Error() != "mmiotrace: diff: traces too different (more than 1 insertions and deletions)" || out.Len() != 0 {
		t.Errorf("DiffLogs over maxEdits: err %v, %d bytes written", err, out.Len())
	}
}

// TestDiffLogsHeldOutput: the output is held until the diff ends, beyond
// 4 MiB in a temporary file: with --all on the lab log repeated 20 times
// (about 15 MB of output) DiffLogs writes the same bytes as WriteDiff of
// the whole-log alignment and leaves no file behind; with writes to
// another register inserted in the middle and near the end of B and
// maxEdits 1, it gives up having written nothing, the temporary file
// removed too.
func TestDiffLogsHeldOutput(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	data, err := os.ReadFile("testdata/e1000-bind.log")
	if err != nil {
		t.Fatal(err)
	}
	body := data[bytes.Index(data, []byte("\nR "))+1:]
	log := append([]byte(nil), data...)
	for i := 0; i < 19; i++ {
		log = append(log, body...)
	}
	acc, err := Accesses(bytes.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := fullDiff(acc, acc, 0)
	if err != nil {
		t.Fatal(err)
	}
	var want, out bytes.Buffer
	if err := WriteDiff(&want, acc, acc, ops, DiffFormat{All: true}); err != nil {
		t.Fatal(err)
	}
	if want.Len() < 8<<20 {
		t.Fatalf("only %d bytes of output: the file is not used", want.Len())
	}
	if err := DiffLogs(&out, NewDiffLog(bytes.NewReader(log), "a", ""), NewDiffLog(bytes.NewReader(log), "b", ""), 0, DiffFormat{All: true}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want.Bytes()) {
		t.Errorf("DiffLogs wrote %d bytes, WriteDiff %d, not the same", out.Len(), want.Len())
	}
	w := []byte("\nW 4 9.0 1 0xfebc1ff0 0x1 0x0 0\n")
	mid := len(log) / 2
	edited := append(append(append([]byte(nil), log[:mid]...), w...), log[mid:len(log)-200]...)
	edited = append(append(edited, w...), log[len(log)-200:]...)
	out.Reset()
	err = DiffLogs(&out, NewDiffLog(bytes.NewReader(log), "a", ""), NewDiffLog(bytes.NewReader(edited), "b", ""), 1, DiffFormat{All: true})
	if !errors.Is(err, ErrTooDifferent) || out.Len() != 0 {
		t.Errorf("two insertions, maxEdits 1: err %v, %d bytes written", err, out.Len())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left behind in TMPDIR: %v", left)
	}
}
