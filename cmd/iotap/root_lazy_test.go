package main

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// describe lists every command under c with its flags (name, shorthand,
// default, usage), one line each, sorted.
func describe(c *cobra.Command) []string {
	var out []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		var fl []string
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			fl = append(fl, f.Name+"/"+f.Shorthand+"="+f.DefValue+":"+f.Usage)
		})
		out = append(out, c.CommandPath()+" "+strings.Join(c.Aliases, ",")+" ["+strings.Join(fl, " ")+"]")
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(c)
	sort.Strings(out)
	return out
}

// TestRootForCommandMatchesWholeTree checks the start-up shortcut of run:
// for every top-level command, the tree built for "iotap NAME ..." has
// that command with the same subcommands and flags as the whole tree,
// topCommands names every command of the whole tree (none left out of the
// shortcut, none named wrongly), and anything else gets the whole tree.
func TestRootForCommandMatchesWholeTree(t *testing.T) {
	newEnv := func() *env {
		return &env{ctx: context.Background(), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	}
	full := newRootCmd(newEnv())
	var names []string
	for _, c := range full.Commands() {
		names = append(names, c.Name())
	}
	var top []string
	for _, tc := range topCommands {
		top = append(top, tc.name)
		if n := tc.make(newEnv()).Name(); n != tc.name {
			t.Errorf("topCommands entry %q makes the command %q", tc.name, n)
		}
	}
	sort.Strings(top)
	if strings.Join(names, " ") != strings.Join(top, " ") {
		t.Fatalf("whole tree has commands %v, topCommands %v", names, top)
	}
	for _, tc := range topCommands {
		lazy := newRootCmdFor(newEnv(), []string{tc.name, "--help"})
		if n := len(lazy.Commands()); n != 1 || lazy.Commands()[0].Name() != tc.name {
			t.Fatalf("%s: root for it has %d commands", tc.name, n)
		}
		sub, _, err := full.Find([]string{tc.name})
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Join(describe(sub), "\n")
		got := strings.Join(describe(lazy.Commands()[0]), "\n")
		if got != want {
			t.Errorf("%s: tree differs from the whole tree's:\n%s\nwant\n%s", tc.name, got, want)
		}
		if a, b := strings.Join(describe(lazy)[:1], ""), strings.Join(describe(full)[:1], ""); a != b {
			t.Errorf("%s: root differs: %q, whole tree %q", tc.name, a, b)
		}
	}
	for _, args := range [][]string{nil, {"--help"}, {"--progress", "usb"}, {"usbb"}, {"__complete", "u"}, {"help", "usb"}} {
		if n := len(newRootCmdFor(newEnv(), args).Commands()); n != len(topCommands) {
			t.Errorf("args %q: %d commands, want the whole tree's %d", args, n, len(topCommands))
		}
	}
}
