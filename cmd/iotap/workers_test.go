package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestNegativeWorkers finds every command with a --workers flag and
// checks that --workers -2 is a usage error (exit 2) naming the flag and
// the value, before the input is read, where it used to be taken as 0
// (the command's own choice) without a word. --workers 0 and 1 still run.
func TestNegativeWorkers(t *testing.T) {
	inputs := map[string]string{
		"usb":  filepath.Join("..", "..", "testdata", "usbmon", "lab-0u.txt"),
		"mmio": filepath.Join("..", "..", "testdata", "mmiotrace", "e1000-probe.log"),
		"pt":   writePTTrace(t),
	}
	var found []string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.Flags().Lookup("workers") != nil {
			found = append(found, strings.Join(path, " "))
		}
		for _, s := range c.Commands() {
			walk(s, append(append([]string(nil), path...), s.Name()))
		}
	}
	walk(newRootCmd(&env{ctx: context.Background(), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}), nil)
	if len(found) < 6 {
		t.Fatalf("commands with --workers: %q, want at least usb read/stats/pair, mmio read/filter, pt dump/stats", found)
	}
	for _, name := range found {
		args := strings.Fields(name)
		in, ok := inputs[args[0]]
		if !ok {
			t.Errorf("%s: no input for the %s commands in this test", name, args[0])
			continue
		}
		_, stderr, code := runIotap(t, append(args, "--workers", "-2", in)...)
		const want = `invalid argument "-2" for "--workers" flag: want 0 (automatic) or more`
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%s --workers -2: exit %d, stderr %q; want exit 2 and %q", name, code, stderr, want)
		}
		for _, w := range []string{"0", "1", "0x2"} {
			if _, stderr, code := runIotap(t, append(args, "--allow-loss", "--workers", w, in)...); code != 0 {
				t.Errorf("%s --workers %s: exit %d: %s", name, w, code, stderr)
			}
		}
	}
}
