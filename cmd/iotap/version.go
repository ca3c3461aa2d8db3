package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/iotap/iotap/internal/unix"
	"github.com/spf13/cobra"
)

// version is set at link time with -ldflags "-X main.version=…".
var version = "dev"

// versionString is iotap's version and the commit it was built from, as
// the Go toolchain recorded them (go build in a git checkout records the
// revision, its time and whether the tree had uncommitted changes):
// "dev (commit 1a2b3c4d5e6f, 2026-11-25T13:00:00Z, modified)".
func versionString(bi *debug.BuildInfo, ok bool) string {
	v := version
	if !ok {
		return v
	}
	if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	var rev, when string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return v + " (commit unknown: built without VCS information, e.g. by go run)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v += " (commit " + rev
	if when != "" {
		v += ", " + when
	}
	if modified {
		v += ", modified"
	}
	return v + ")"
}

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print iotap's version and commit, the Go toolchain and the running kernel",
		Example: "  iotap version\n  iotap --version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(e.stdout, "iotap %s\n", versionString(debug.ReadBuildInfo()))
			fmt.Fprintf(e.stdout, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			if k, err := unix.KernelRelease(); err == nil {
				fmt.Fprintf(e.stdout, "kernel: %s\n", k)
			} else {
				fmt.Fprintf(e.stdout, "kernel: unknown (%v)\n", err)
			}
			return nil
		},
	}
}
