package main

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// TestPTStdinNotPT: random bytes (no PSB) or nothing on standard input
// are not an Intel PT trace for pt dump (text and --json) and pt stats:
// exit 1 saying so (a file with the same bytes is refused by its head);
// a raw trace on standard input is still listed.
func TestPTStdinNotPT(t *testing.T) {
	dir := t.TempDir()
	rnd := make([]byte, 5000)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range rnd {
		rnd[i] = byte(r.Uint32())
		if rnd[i] == 0x02 { // no PSB (02 82 ...) can appear
			rnd[i] = 0x03
		}
	}
	for name, data := range map[string][]byte{"random": rnd, "empty": nil} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"pt", "dump", "-"}, {"pt", "dump", "--json", "-"}, {"pt", "stats", "-"}} {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			old := os.Stdin
			os.Stdin = f
			_, _, err = ptRun(t, args...)
			os.Stdin = old
			f.Close()
			var ce *codeError
			if !errors.Is(err, intelpt.ErrNoPSB) || errors.As(err, &ce) || !strings.Contains(err.Error(), "no PSB in ") {
				t.Errorf("%s on %s stdin: %v, want a plain error wrapping ErrNoPSB (exit 1)", strings.Join(args, " "), name, err)
			}
		}
	}
	f, err := os.Open("../../intelpt/testdata/libipt/ovf.pt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	out, _, err := ptRun(t, "pt", "dump", "--allow-loss", "-")
	os.Stdin = old
	if err != nil || !strings.Contains(out, "psbend") {
		t.Errorf("a raw trace on stdin: %v\n%s", err, out)
	}
}

// TestPTFlowStdin: pt flow lists a raw trace read from standard input
// ("-") as it lists the file (it said "open -"); a perf.data asked for on
// standard input is a usage error naming what is needed.
// TestPTFlowFIFO (Linux) does the same for a FIFO.
func TestPTFlowStdin(t *testing.T) {
	args, want := ptFlowFileListing(t)
	f, err := os.Open(ptFlowTrace)
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdin
	os.Stdin = f
	got, _, err := ptRun(t, append(args, "-")...)
	os.Stdin = old
	f.Close()
	if err != nil || got != want {
		t.Errorf("from standard input: %v\n%s\nwant\n%s", err, got, want)
	}
	_, _, err = ptRun(t, "pt", "flow", "-")
	var ce *codeError
	if !errors.As(err, &ce) || ce.code != exitUsage || !strings.Contains(err.Error(), "not from standard input") {
		t.Errorf("pt flow - without an image: %v", err)
	}
}

const ptFlowTrace = "../../intelpt/testdata/libipt/call_direct-ret_compressed.pt"

// ptFlowFileListing is pt flow's listing of ptFlowTrace read from the
// file, and the arguments before the trace.
func ptFlowFileListing(t *testing.T) ([]string, string) {
	t.Helper()
	args := []string{"pt", "flow", "--raw", "../../intelpt/testdata/libipt/call_direct-ret_compressed.bin:0x100000"}
	want, _, err := ptRun(t, append(args, ptFlowTrace)...)
	if err != nil || want == "" {
		t.Fatalf("from the file: %v\n%s", err, want)
	}
	return args, want
}
