package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/iotap/iotap/internal/buildinfo"
	"github.com/iotap/iotap/internal/unix"
	"github.com/spf13/cobra"
)

// version is set at link time with -ldflags "-X main.version=…".
var version = "dev"

// versionString is iotap's version and the commit it was built from
// (buildinfo.Version).
func versionString(bi *debug.BuildInfo, ok bool) string { return buildinfo.Version(version, bi, ok) }

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
