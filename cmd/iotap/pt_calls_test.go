//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// synthPerfData builds and runs intelpt's PT synthesizer (a test tool
// outside the iotap binary): the perf.data of a single-stepped run of the
// calls test program.
func synthPerfData(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	tool := filepath.Join(dir, "ptsynth")
	if b, err := exec.Command("go", "build", "-o", tool, "../../intelpt/ptsynth/cmd/ptsynth").CombinedOutput(); err != nil {
		t.Fatalf("building ptsynth: %v: %s", err, b)
	}
	if b, err := exec.Command(tool, "-o", dir).CombinedOutput(); err != nil {
		t.Fatalf("ptsynth: %v: %s", err, b)
	}
	return filepath.Join(dir, "perf.data")
}

func init() {
	ndjsonDocExtra = append(ndjsonDocExtra, func(t *testing.T) []string { return []string{"pt", "calls", "--json", synthPerfData(t)} })
}

func TestPTCallsCLI(t *testing.T) {
	perf := synthPerfData(t)
	out, stderr, code := runUSB(t, "pt", "calls", perf)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The tree: fib's paths sum to the 177 calls of fib(10).
	n := 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 6 && f[5] == "fib" {
			var c int
			json.Unmarshal([]byte(f[0]), &c)
			n += c
		}
	}
	if n != 177 {
		t.Errorf("fib called %d times in the tree, want 177:\n%s", n, out)
	}
	// the vDSO is this process's (the same kernel, with the build-id of perf's table)
	if strings.Contains(stderr, "not decoded") || !strings.Contains(stderr, "0 gaps") {
		t.Errorf("stderr: %s", stderr)
	}

	// --json: one object per call, nested within its parent.
	out, _, code = runUSB(t, "pt", "calls", "--json", perf)
	if code != 0 {
		t.Fatalf("--json: exit %d", code)
	}
	fib := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		var c struct {
			Thread   int    `json:"tid"`
			Depth    int    `json:"depth"`
			Function string `json:"func"`
			Begin    uint64 `json:"begin_ns"`
			End      uint64 `json:"end_ns"`
		}
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if c.End < c.Begin {
			t.Errorf("ends before it begins: %s", l)
		}
		if c.Function == "fib" {
			fib++
		}
	}
	if fib != 177 {
		t.Errorf("--json: %d fib calls", fib)
	}

	// --folded: collapsed stacks whose weights sum to the instructions.
	out, _, code = runUSB(t, "pt", "calls", "--folded", perf)
	if code != 0 || !strings.Contains(out, ";main;fib;fib;fib ") {
		t.Errorf("--folded: exit %d:\n%s", code, out)
	}

	// The call track of the timeline: one slice per call.
	trace := filepath.Join(t.TempDir(), "calls.pftrace")
	out, stderr, code = runUSB(t, "timeline", "--pt-calls", "-o", trace, perf)
	js, _, _ := runUSB(t, "pt", "calls", "--json", perf)
	if want := strings.Count(js, "\n") - 1; code != 0 || !strings.Contains(out, fmt.Sprintf(" %d slices", want)) {
		t.Errorf("timeline --pt-calls: exit %d, want %d slices: %s %s", code, want, out, stderr)
	}

	// A truncated file: data lost, exit 3.
	b, _ := os.ReadFile(perf)
	cut := filepath.Join(t.TempDir(), "cut.data")
	os.WriteFile(cut, b[:len(b)*2/3], 0o600)
	if _, stderr, code := runUSB(t, "pt", "calls", cut); code != 3 {
		t.Errorf("truncated perf.data: exit %d: %s", code, stderr)
	}

	// The mapped files missing (an empty sysroot and build-id cache):
	// each mapping named on stderr, the code run there a gap, exit 3;
	// --allow-loss: 0.
	empty := t.TempDir()
	_, stderr, code = runUSB(t, "pt", "calls", "--sysroot", empty, "--buildid-dir", empty, perf)
	if code != 3 || strings.Count(stderr, "not decoded: symtab:") != 3 || !strings.Contains(stderr, "pt calls: gap: thread") ||
		!strings.Contains(stderr, "gaps in the trace") {
		t.Errorf("missing files: exit %d:\n%s", code, stderr)
	}
	if _, _, code := runUSB(t, "pt", "calls", "--allow-loss", "--sysroot", empty, "--buildid-dir", empty, perf); code != 0 {
		t.Errorf("missing files, --allow-loss: exit %d", code)
	}
}

// TestPTFlowSideband: pt flow given a perf.data and no image builds the
// image from its sideband (the program, libc, ld.so, the vDSO) and lists
// exactly the instructions the single-stepped run executed (truth.txt,
// from ptrace); a file that is neither a perf.data nor a directory still
// asks for an image.
func TestPTFlowSideband(t *testing.T) {
	perf := synthPerfData(t)
	truth, err := os.ReadFile(filepath.Join(filepath.Dir(perf), "truth.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runUSB(t, "pt", "flow", perf)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" && l[0] != '[' {
			got = append(got, strings.TrimLeft(l, "0"))
		}
	}
	want := strings.Fields(string(truth))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		n := 0
		for n < len(got) && n < len(want) && got[n] == want[n] {
			n++
		}
		t.Fatalf("%d instructions listed, %d ran; first difference at %d", len(got), len(want), n)
	}
	if _, stderr, code := runUSB(t, "pt", "flow", filepath.Join(filepath.Dir(perf), "truth.txt")); code != 2 || !strings.Contains(stderr, "no image") {
		t.Errorf("a text file as trace without image: exit %d: %s", code, stderr)
	}
}

// TestPTCallsResolution: a negative --resolution is a usage error (exit
// 2, nothing on stdout; it kept no call, exit 0), and the note of a
// --resolution over a raw trace, which has no TSC conversion, is this
// exact line (the words of pt calls' flag; the library names its field).
func TestPTCallsResolution(t *testing.T) {
	code := "../../intelpt/testdata/libipt/call_direct-ret_compressed.bin:0x100000"
	trace := "../../intelpt/testdata/libipt/call_direct-ret_compressed.pt"
	stdout, stderr, rc := runUSB(t, "pt", "calls", "--resolution", "-1s", "--raw", code, trace)
	if rc != exitUsage || stdout != "" || stderr != "iotap: pt calls: --resolution -1s: want 0 (all calls) or more\n" {
		t.Errorf("--resolution -1s: exit %d, stdout %q, stderr %q", rc, stdout, stderr)
	}
	_, stderr, rc = runUSB(t, "pt", "calls", "--quiet", "--resolution", "10us", "--raw", code, trace)
	if want := "iotap: pt calls: no TSC conversion in the input: --resolution is compared with TSC ticks\n"; rc != 0 || !strings.HasPrefix(stderr, want) {
		t.Errorf("--resolution 10us: exit %d, stderr %q, want it to start with %q", rc, stderr, want)
	}
}
