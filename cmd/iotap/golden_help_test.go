package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpGolden pins the --help of every command and the values shell
// completion offers for the flags that have a fixed set, byte for byte,
// in testdata/golden/help.golden: the flag definitions move into shared
// flag groups (issue 11) and no help text may change with them.
// IOTAP_UPDATE_GOLDEN=1 rewrites it.
func TestHelpGolden(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the capture commands' help is the Linux one")
	}
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || strings.HasPrefix(sub.Name(), "__") {
				continue
			}
			walk(sub, append(path[:len(path):len(path)], sub.Name()))
		}
	}
	walk(newRootCmd(&env{ctx: context.Background()}), nil)
	var b strings.Builder
	one := func(args ...string) {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, &stdout, &stderr)
		fmt.Fprintf(&b, "# iotap %s\nexit %d\n", strings.Join(args, " "), exitCode(err, &stderr))
		goldenSection(&b, "stdout", stdout.String())
		goldenSection(&b, "stderr", stderr.String())
	}
	for _, p := range paths {
		one(append(p, "--help")...)
	}
	for _, args := range [][]string{
		{"usb", "read", "--type", ""}, {"usb", "read", "--dir", ""}, {"usb", "stats", "--status", ""},
		{"usb", "pair", "--from", ""}, {"usb", "read", "--to", ""}, {"usb", "convert", "--to", ""},
		{"usb", "convert", "--format", ""}, {"usb", "read", "-Y", "usb.tr"}, {"mmio", "read", "-Y", "mmio.re"},
		{"mmio", "names", "--db", ""}, {"mmio", "filter", "--kind", ""}, {"report", "--format", ""},
		{"events", "read", "-Y", "event."}, {"capture", "--partition", ""}, {"usb", "capture", "--method", ""},
	} {
		one(append([]string{"__complete"}, args...)...)
	}
	checkGoldenText(t, filepath.Join("testdata", "golden", "help.golden"), "every command's --help", b.String())
}
