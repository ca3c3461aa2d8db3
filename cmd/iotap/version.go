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

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print iotap's version, the Go toolchain and the running kernel",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := version
			if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
				v = bi.Main.Version
			}
			fmt.Fprintf(e.stdout, "iotap %s\n", v)
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
