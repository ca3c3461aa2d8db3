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
