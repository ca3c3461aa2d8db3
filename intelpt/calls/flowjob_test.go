package calls

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/ptsynth"
)

const libiptCorpus = "../../../shared/testdata/intelpt-libipt"

// flowListing runs j and returns its listing and loss.
func flowListing(t *testing.T, j *FlowJob) (string, []string) {
	t.Helper()
	tr, err := j.Open()
	if err != nil {
		t.Fatalf("Open %s: %v", j.Trace, err)
	}
	defer tr.Close()
	var w bytes.Buffer
	var last int64
	if _, err := tr.Run(&w, func(off int64) { last = off }); err != nil {
		t.Fatal(err)
	}
	if last < 0 || last > tr.Size() {
		t.Errorf("progress %d beyond the trace's %d bytes", last, tr.Size())
	}
	return w.String(), tr.Loss()
}

// TestFlowJobLibipt: a raw trace over --raw code lists what libipt's
// ptxed lists for the same test of its corpus (the .exp files), with the
// decoder's options as the test's "opt:ptxed" line gives them (bad_cpu:
// --cpu 0/0, a CPU not known, whose config error ptxed lists first).
func TestFlowJobLibipt(t *testing.T) {
	if _, err := os.Stat(libiptCorpus); err != nil {
		t.Skipf("libipt corpus not found at %s", libiptCorpus)
	}
	for _, c := range []struct{ name, cpu string }{
		{"call_direct-ret_compressed", ""},
		{"call_indirect-ret_uncompressed", ""},
		{"bad_cpu", "0/0"},
	} {
		p := filepath.Join(libiptCorpus, c.name)
		want, err := os.ReadFile(p + "-ptxed.exp")
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range []bool{true, false} {
			j := &FlowJob{Trace: p + ".pt", Raw: []string{p + ".bin:0x100000"}, CPU: c.cpu, Listing: intelpt.FlowOptions{BlockDecoder: block}}
			got, loss := flowListing(t, j)
			if got != string(want) {
				t.Errorf("%s (block %v):\n%s\nptxed lists:\n%s", c.name, block, got, want)
			}
			if len(loss) != 0 {
				t.Errorf("%s: loss %q", c.name, loss)
			}
		}
	}
}

// TestFlowJobPerfData: a perf.data's stream is listed over the image its
// sideband's mmap records make, the same lines as the raw trace over the
// same code given with Raw; its JSON records name the stream; a perf.data
// whose AUX record says the kernel truncated the trace has that loss.
func TestFlowJobPerfData(t *testing.T) {
	dir := t.TempDir()
	const base = 0x401000
	code := filepath.Join(dir, "loop.bin")
	if err := os.WriteFile(code, []byte{0x75, 0xfe, 0xc3}, 0o600); err != nil { // jne .; ret
		t.Fatal(err)
	}
	var enc intelpt.Encoder
	enc.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	enc.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCSext48, Payload: base})
	enc.Encode(intelpt.Packet{Kind: intelpt.KindModeExec, Flags: intelpt.FlagCSL}) // 64-bit
	enc.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
	enc.Encode(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 5, Payload: 0x1e}) // 4 taken, 1 not
	enc.Encode(intelpt.Packet{Kind: intelpt.KindTIPPGD, IPC: intelpt.IPCSuppressed})
	raw := filepath.Join(dir, "loop.pt")
	if err := os.WriteFile(raw, enc.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	run := &ptsynth.Run{PID: 1000, Comm: "loop", Maps: []ptsynth.Map{{Start: base, End: base + 3, Perm: "r-xp", Path: code}}}
	perf := filepath.Join(dir, "loop.perf.data")
	data := ptsynth.PerfData(run, &ptsynth.Encoded{PT: enc.Bytes(), TSC: []uint64{10, 1 << 40}}, ptsynth.PerfOptions{PerThread: true})
	if err := os.WriteFile(perf, data, 0o600); err != nil {
		t.Fatal(err)
	}

	want, loss := flowListing(t, &FlowJob{Trace: raw, Raw: []string{code + ":0x401000"}, Listing: intelpt.FlowOptions{BlockDecoder: true}})
	if n := strings.Count(want, "0000000000401000\n"); n != 5 || !strings.HasSuffix(want, "0000000000401002\n[disabled]\n") || len(loss) != 0 {
		t.Fatalf("raw trace: %d jne, loss %q, want 5 then the ret and none:\n%s", n, loss, want)
	}
	j := &FlowJob{Trace: perf, Input: FlowOptions{Stream: -1}, Listing: intelpt.FlowOptions{BlockDecoder: true}}
	got, loss := flowListing(t, j)
	if got != want || len(loss) != 0 {
		t.Errorf("perf.data: loss %q, listing:\n%s\nwant (raw trace):\n%s", loss, got, want)
	}
	j.Listing.JSON = true
	got, _ = flowListing(t, j)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if !strings.Contains(lines[0], `"format":"perf.data"`) || !strings.Contains(lines[1], `"stream":`) {
		t.Errorf("JSON: the input record and a record naming the stream, got:\n%s", got)
	}
}

// TestFlowJobErrors: wrong options are *FlowArgError naming the FlowJob
// field (its Go name, not the CLI's flag), checked before the trace is
// opened; a perf.data of several streams
// needs one chosen; standard input needs the image given; an empty trace
// is an error naming it.
func TestFlowJobErrors(t *testing.T) {
	const lib = "../testdata/libipt/"
	img := []string{lib + "call_direct-ret_compressed.bin:0x100000"}
	empty := filepath.Join(t.TempDir(), "empty.pt")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var ae *FlowArgError
	var se *StreamsError
	for _, c := range []struct {
		job   FlowJob
		check func(error) bool
	}{
		{FlowJob{Trace: "nosuch.pt", Raw: img, CPU: "6/999"}, func(err error) bool {
			return errors.As(err, &ae) && ae.Field == "CPU" && strings.HasPrefix(err.Error(), "calls: FlowJob.CPU: ")
		}},
		{FlowJob{Trace: "nosuch.pt", Raw: img, FilterCfg: [4]uint64{0, 16}}, func(err error) bool {
			return errors.As(err, &ae) && ae.Field == "FilterCfg" && ae.Index == 1 && ae.Error() == "calls: FlowJob.FilterCfg[1]: value too big: 16"
		}},
		{FlowJob{Trace: lib + "ovf.pt:8-4", Raw: img}, func(err error) bool {
			return errors.As(err, &ae) && ae.Field == "Trace" && strings.HasPrefix(err.Error(), "calls: FlowJob.Trace: ")
		}},
		{FlowJob{Trace: "-"}, func(err error) bool { return errors.Is(err, ErrStdin) }},
		{FlowJob{Trace: lib + "ovf.pt"}, func(err error) bool { return errors.Is(err, ErrNoSideband) }},
		{FlowJob{Trace: lib + "two-cpus.perf.data", Input: FlowOptions{Stream: -1}}, func(err error) bool { return errors.As(err, &se) && se.Streams == 2 }},
		{FlowJob{Trace: empty, Raw: img}, func(err error) bool {
			return err != nil && strings.Contains(err.Error(), empty+": not an Intel PT trace: empty")
		}},
	} {
		tr, err := c.job.Open()
		if !c.check(err) {
			t.Errorf("%+v: error %v", c.job, err)
		}
		if tr != nil {
			tr.Close()
		}
	}
}

// TestFlowJobLoss: the overflow of a trace is its loss, as the listing
// shows it.
func TestFlowJobLoss(t *testing.T) {
	const lib = "../testdata/libipt/"
	got, loss := flowListing(t, &FlowJob{Trace: lib + "ovf.pt", Raw: []string{lib + "call_direct-ret_compressed.bin:0x100000"}, Listing: intelpt.FlowOptions{BlockDecoder: true}})
	if len(loss) != 1 || !strings.Contains(loss[0], "1 overflow(s)") || !strings.Contains(got, "overflow") {
		t.Errorf("loss %q, listing:\n%s", loss, got)
	}
}

// TestJobOpenNames: pt calls' input errors name the input (Open's say
// what is wrong but not which file), "-" is ErrStdin, a bad Raw a
// *RawError as it is.
func TestJobOpenNames(t *testing.T) {
	notes := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notes, []byte("not a trace\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := (&Job{}).Open(notes); err == nil || !strings.HasPrefix(err.Error(), notes+": ") || strings.Count(err.Error(), notes) != 1 {
		t.Errorf("a text file: %v", err)
	}
	if _, _, err := (&Job{}).Open("-"); !errors.Is(err, ErrStdin) {
		t.Errorf("-: %v", err)
	}
	var re *RawError
	if _, _, err := (&Job{Raw: []string{"nosuch.bin:0x1000"}}).Open(notes); !errors.As(err, &re) || strings.Contains(err.Error(), notes) {
		t.Errorf("bad --raw: %v", err)
	}
}

// TestNoPTData: a perf.data without PT data (user_events samples) is
// intelpt.ErrNoPTData naming it for pt calls (Job.Open) and pt flow
// (OpenFlow, FlowJob), as pt dump and pt stats say it; pt calls listed an
// empty tree, exit 0, and pt flow asked to choose one of 0 streams.
func TestNoPTData(t *testing.T) {
	const perf = "../../userevents/testdata/linuxtracepoints/perf.data"
	if _, err := os.Stat(perf); err != nil {
		t.Skip(err)
	}
	_, _, errCalls := (&Job{}).Open(perf)
	_, errFlow := OpenFlow(perf, FlowOptions{Stream: -1})
	_, errJob := (&FlowJob{Trace: perf, Input: FlowOptions{Stream: 0}}).Open()
	for what, err := range map[string]error{"Job.Open": errCalls, "OpenFlow": errFlow, "FlowJob.Open": errJob} {
		if !errors.Is(err, intelpt.ErrNoPTData) || !strings.HasPrefix(err.Error(), perf+": ") {
			t.Errorf("%s: %v", what, err)
		}
	}
}

// TestFlowNamesBadPerfData: a cut perf.data (its data section outside the
// file) is named once by pt flow (OpenFlow, FlowJob.Open) as by pt calls
// (Job.Open), with a short name (x, also in "0x28") and a long one; pt
// flow did not name it.
func TestFlowNamesBadPerfData(t *testing.T) {
	const perf = "../../userevents/testdata/linuxtracepoints/perf.data"
	b, err := os.ReadFile(perf)
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	long := filepath.Join(dir, "cut.data")
	for _, p := range []string{long, filepath.Join(dir, "x")} {
		if err := os.WriteFile(p, b[:2000], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	for _, name := range []string{long, "x"} {
		want := name + ": bad perf.data: offset 0x28: data section offset 0xf30 outside the file (2000 bytes)"
		_, errFlow := OpenFlow(name, FlowOptions{Stream: -1})
		_, errJob := (&FlowJob{Trace: name, Input: FlowOptions{Stream: -1}}).Open()
		_, _, errCalls := (&Job{}).Open(name)
		for what, err := range map[string]error{"OpenFlow": errFlow, "FlowJob.Open": errJob, "Job.Open": errCalls} {
			if !errors.Is(err, intelpt.ErrPerfData) || err.Error() != want {
				t.Errorf("%s %s: got %v, want %s", what, name, err, want)
			}
		}
	}
	// A directory without capture.json: the *fs.PathError alone names it.
	if err := os.Mkdir("d", 0o700); err != nil {
		t.Fatal(err)
	}
	var pe *fs.PathError
	if _, err := OpenFlow("d", FlowOptions{Stream: -1}); !errors.As(err, &pe) || err.Error() != pe.Error() {
		t.Errorf("OpenFlow d: %v (want the *fs.PathError alone)", err)
	}
}
