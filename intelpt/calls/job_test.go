package calls

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/intelpt"
)

// TestJob: a raw trace over its code (libipt's call_direct-ret_compressed:
// the 3 instructions ptxed lists, one call) opens with the job's options
// and no loss; the code at the wrong address gives gaps, which are its
// loss; a Raw that does not load is a *RawError; a missing input the
// stat's error; MaxDepth 0 means no limit; Resolution is in ns.
func TestJob(t *testing.T) {
	const lib = "../testdata/libipt/"
	j := Job{Raw: []string{lib + "call_direct-ret_compressed.bin:0x100000"}, PID: 7, MaxDepth: 3, Resolution: time.Microsecond, NoDemangle: true}
	in, o, err := j.Open(lib + "call_direct-ret_compressed.pt")
	if err != nil {
		t.Fatal(err)
	}
	if o.Image == nil || o.PID != 7 || o.TreeDepth != 3 || o.Resolution != 1000 || o.Demangle {
		t.Errorf("options %+v", o)
	}
	o.PID = 0 // the raw trace's one thread is TID 1 of no process
	res, err := Run(io.Discard, in, "x.pt", OutputNone, o)
	if err != nil || res.Stats.Insns != 3 || res.Loss(in) != "" {
		t.Fatalf("raw: %+v, loss %q, %v", res, res.Loss(in), err)
	}
	j.Raw, j.MaxDepth = []string{lib + "call_direct-ret_compressed.bin:0x200000"}, 0
	in, o, err = j.Open(lib + "call_direct-ret_compressed.pt")
	if err != nil || o.TreeDepth != -1 {
		t.Fatalf("depth 0: %d, %v", o.TreeDepth, err)
	}
	o.PID = 0
	res, _ = Run(io.Discard, in, "x.pt", OutputNone, o)
	if res == nil || res.Gaps == 0 || res.Loss(in) != fmt.Sprintf("%d gaps in the trace", res.Gaps) {
		t.Errorf("code elsewhere: %+v", res)
	}
	in.Loss = "3 records lost"
	if got := res.Loss(in); got != "data lost: 3 records lost" {
		t.Errorf("input loss: %q", got)
	}
	j.Raw = []string{lib + "call_direct-ret_compressed.bin"}
	var re *RawError
	if _, _, err := j.Open(lib + "call_direct-ret_compressed.pt"); !errors.As(err, &re) {
		t.Errorf("raw without address: %v", err)
	}
	if _, _, err := j.Open(lib + "nosuchfile.pt"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing input: %v", err)
	}
}

// TestJobCutTrace: a raw trace cut inside a packet is loss (Result.Cut,
// in Loss), named with the offset of the packet cut, as the decoder ends
// there as at a trace's end. The oracle is libipt's ptdump: its listing of
// call_direct-ret_compressed puts packets at 0x0, 0x10, 0x17, 0x19, 0x1b,
// 0x1c and 0x1f (32 bytes); every cut after the PSB is tried, a cut at a
// packet boundary is no loss. A PSB then 4 bytes of a TSC (the review's
// 20-byte trace) is cut at 0x10. Nothing was said before.
func TestJobCutTrace(t *testing.T) {
	const lib = "../testdata/libipt/"
	full, err := os.ReadFile(lib + "call_direct-ret_compressed.pt")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	j := Job{Raw: []string{lib + "call_direct-ret_compressed.bin:0x100000"}}
	run := func(name string, trace []byte) *Result {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, trace, 0o600); err != nil {
			t.Fatal(err)
		}
		in, o, err := j.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		res, err := Run(io.Discard, in, path, OutputNone, o)
		if err != nil {
			t.Fatal(err)
		}
		if l := res.Loss(in); len(res.Cut) > 0 && !strings.HasSuffix(l, strings.Join(res.Cut, "; ")) || len(res.Cut) == 0 && strings.Contains(l, "inside a packet") {
			t.Errorf("%s: Loss %q, Cut %q", name, l, res.Cut)
		}
		return res
	}
	boundaries := []int{0x10, 0x17, 0x19, 0x1b, 0x1c, 0x1f, 0x20}
	for cut := 0x10; cut <= len(full); cut++ {
		var want []string
		if i, found := slices.BinarySearch(boundaries, cut); !found {
			p := boundaries[i-1]
			want = []string{fmt.Sprintf("tid 1: trace ends inside a packet at offset %#x (last %d bytes)", p, cut-p)}
		}
		if res := run("cut.pt", full[:cut]); !slices.Equal(res.Cut, want) {
			t.Errorf("cut at %#x: %q, want %q", cut, res.Cut, want)
		}
	}
	tsc := append(append([]byte(nil), full[:16]...), 0x19, 1, 2, 3) // a TSC has 7 bytes of payload
	if res, want := run("psb-tsc.pt", tsc), []string{"tid 1: trace ends inside a packet at offset 0x10 (last 4 bytes)"}; !slices.Equal(res.Cut, want) {
		t.Errorf("PSB and part of a TSC: %q, want %q", res.Cut, want)
	}
}

// TestJobOpenNamesShortNames: whether Job.Open names the input is decided
// by what the error is, not by the name showing in its message: text
// files named x and a (x is in "offset 0x0", a in "bad perf.data") are
// named, once, as a long name is; the errors that name them already (the
// stat of a missing file, the open of a directory's capture.json) are not
// named again. Before, x and a were not named at all.
func TestJobOpenNamesShortNames(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, name := range []string{"x", "a", "notes.txt"} {
		if err := os.WriteFile(name, []byte("not a trace\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := (&Job{}).Open(name)
		if want := name + ": bad perf.data: offset 0x0: missing PERFILE2 magic"; !errors.Is(err, intelpt.ErrPerfData) || err.Error() != want {
			t.Errorf("%s: got %v, want %s", name, err, want)
		}
	}
	if err := os.Mkdir("d", 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"b", "d"} {
		_, _, err := (&Job{}).Open(name)
		var pe *fs.PathError
		if !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) || err.Error() != pe.Error() {
			t.Errorf("%s: %v (want the *fs.PathError alone)", name, err)
		}
	}
}

// TestJobEmptyRaw: an empty raw trace is an error naming it
// (intelpt.ErrNoPSB), in the words of pt flow's (FlowJob.Open) for the
// same file; Job.Open gave an input whose analysis was one thread of 0
// instructions, pt calls' exit 0.
func TestJobEmptyRaw(t *testing.T) {
	raw := []string{"../testdata/libipt/call_direct-ret_compressed.bin:0x100000"}
	empty := filepath.Join(t.TempDir(), "EMPTY")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	want := empty + ": not an Intel PT trace: empty (the input has no bytes)"
	in, _, err := (&Job{Raw: raw}).Open(empty)
	if in != nil {
		in.Close()
	}
	if !errors.Is(err, intelpt.ErrNoPSB) || err.Error() != want {
		t.Errorf("Job.Open: %v, want %s", err, want)
	}
	tr, err := (&FlowJob{Trace: empty, Raw: raw}).Open()
	if tr != nil {
		tr.Close()
	}
	if !errors.Is(err, intelpt.ErrNoPSB) || err.Error() != want {
		t.Errorf("FlowJob.Open: %v, want %s", err, want)
	}
}

// TestJobWarnings: a Resolution over an input without TSC conversion is
// said (it is compared with ticks) in the library's terms, naming the
// Job field; none without a Resolution or with a conversion.
func TestJobWarnings(t *testing.T) {
	in := RawInput(nil, intelpt.Config{})
	want := JobWarning{Field: "Resolution", Problem: "no TSC conversion in the input", Effect: "is compared with TSC ticks"}
	got := (&Job{Resolution: time.Microsecond}).Warnings(in)
	if len(got) != 1 || got[0] != want {
		t.Fatalf("resolution, no conversion: %+v, want %+v", got, want)
	}
	if s := got[0].String(); s != "no TSC conversion in the input: Job.Resolution is compared with TSC ticks" {
		t.Errorf("String() = %q", s)
	}
	if got := (&Job{}).Warnings(in); got != nil {
		t.Errorf("no resolution: %+v", got)
	}
	in.ToNS = func(t uint64) uint64 { return t }
	if got := (&Job{Resolution: time.Microsecond}).Warnings(in); got != nil {
		t.Errorf("resolution, conversion: %+v", got)
	}
}

// TestJobNegativeResolution: a negative Resolution is a *JobArgError of
// Open naming the field, found before the input is read (a path that
// does not exist gives it, not the *fs.PathError); it became a huge
// unsigned number that kept no call.
func TestJobNegativeResolution(t *testing.T) {
	lib := "../testdata/libipt/"
	for _, path := range []string{lib + "call_direct-ret_compressed.pt", filepath.Join(t.TempDir(), "missing")} {
		j := Job{Raw: []string{lib + "call_direct-ret_compressed.bin:0x100000"}, Resolution: -time.Second}
		in, _, err := j.Open(path)
		if in != nil {
			in.Close()
		}
		var ae *JobArgError
		if !errors.As(err, &ae) || ae.Field != "Resolution" || ae.Value != any(-time.Second) ||
			err.Error() != "calls: Job.Resolution -1s: want 0 (all calls) or more" {
			t.Errorf("%s: %v (%T), want a *JobArgError for Resolution", path, err, err)
		}
	}
	j := Job{Raw: []string{lib + "call_direct-ret_compressed.bin:0x100000"}}
	in, o, err := j.Open(lib + "call_direct-ret_compressed.pt")
	if err != nil || o.Resolution != 0 {
		t.Fatalf("Resolution 0: %v, %d", err, o.Resolution)
	}
	in.Close()
}

// TestOutputFlags: pt calls' output flags give Run's form: --quiet first,
// --folded-time only with --folded, --json with --folded refused.
func TestOutputFlags(t *testing.T) {
	for _, c := range []struct {
		f    OutputFlags
		want Output
		err  bool
	}{
		{OutputFlags{}, OutputTree, false},
		{OutputFlags{JSON: true}, OutputJSON, false},
		{OutputFlags{Folded: true}, OutputFolded, false},
		{OutputFlags{Folded: true, FoldedTime: true}, OutputFoldedTime, false},
		{OutputFlags{FoldedTime: true}, OutputTree, false},
		{OutputFlags{Quiet: true, JSON: true}, OutputNone, false},
		{OutputFlags{JSON: true, Folded: true}, 0, true},
		{OutputFlags{JSON: true, Folded: true, Quiet: true}, 0, true},
	} {
		got, err := c.f.Output()
		if (err != nil) != c.err || (!c.err && got != c.want) {
			t.Errorf("%+v: %v, %v; want %v (error %v)", c.f, got, err, c.want, c.err)
		}
	}
}
