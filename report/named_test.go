package report

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/iotap/iotap/detect"
)

// A file named to be read that is no trace is an error naming it; the
// same file found in a directory is listed among the files that are not
// traces, and a clocks.json named is taken as clocks.
func TestBuildNamedNotATrace(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Build(context.Background(), []string{"../testdata/capture/usb.pcapng", notes}, Options{})
	var nt *detect.NotTraceError
	if r != nil || !errors.As(err, &nt) || err.Error() != notes+": not a trace iotap reads: text (line 1 is not an mmiotrace record: \"hello\")" {
		t.Errorf("named: %v, %v", r, err)
	}
	r, err = Build(context.Background(), []string{dir, "../testdata/capture/clocks.json"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Others) != 2 || r.Others[0].Name != notes && r.Others[1].Name != notes || len(r.Clocks) != 1 {
		t.Errorf("in a directory: others %+v, clocks %v", r.Others, r.Clocks)
	}
}

// A trace that cannot be summarised has an Err that does not repeat its
// path (Name is printed next to it), also for a perf.data without PT
// data (of a software event: one of tracepoints is user_events), whose
// error from AnalyzePT names the file.
func TestBuildErrNamesNotPath(t *testing.T) {
	const in = "../perfdata/testdata/cpu-clock-z.data"
	r, err := Build(context.Background(), []string{in}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ft := r.FirstError()
	if ft == nil {
		t.Fatal("a perf.data of cpu-clock summarised as PT")
	}
	if msg := ft.Err.Error(); msg != "perf.data holds no PT data (no PERF_RECORD_AUXTRACE: was it recorded with -e intel_pt//?)" {
		t.Errorf("Err = %q", msg)
	}
	if _, err := AnalyzePT(context.Background(), in, PTOptions{}); err == nil || err.Error() != in+": "+ft.Err.Error() {
		t.Errorf("AnalyzePT = %v: should name the file for a library user", err)
	}
}
