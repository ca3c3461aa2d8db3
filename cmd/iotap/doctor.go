package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/iotap/iotap/internal/doctor"
	"github.com/iotap/iotap/internal/unix"
	"github.com/spf13/cobra"
)

func newDoctorCmd(e *env) *cobra.Command {
	var asJSON bool
	var root string
	c := &cobra.Command{
		Use: "doctor",
		Example: `  iotap doctor
  sudo iotap doctor --json | jq -c '.facilities[] | select(.available | not)'`,
		Short: "Say what this machine can trace, and how to get the rest",
		Long: `doctor checks each facility iotap uses (tracefs, debugfs, usbmon text and binary,
mmiotrace, user_events, intel_pt, perf_event, privileges) and prints whether it
is available, what was found, and the exact remedy when it is not.

--json prints {"kernel":…,"facilities":[{"name":…,"available":…,"detail":…,"remedy":…},…]},
a stable interface for scripts. Missing facilities are not an error: the exit
code is 0 whenever the checks could run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			sys := doctor.System{Root: root, EUID: unix.Geteuid()}
			sys.Release, _ = unix.KernelRelease()
			sys.Caps, sys.CapsErr = unix.Capabilities()
			rep := doctor.Check(sys)
			if asJSON {
				enc := json.NewEncoder(e.stdout)
				return enc.Encode(rep)
			}
			return printDoctor(e, rep)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	c.Flags().StringVar(&root, "root", "", "inspect a system tree mounted at this directory instead of /")
	_ = c.Flags().MarkHidden("root")
	return c
}

func printDoctor(e *env, rep doctor.Report) error {
	fmt.Fprintf(e.stdout, "kernel %s\n\n", rep.Kernel)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	missing := 0
	for _, f := range rep.Facilities {
		state := "available"
		if !f.Available {
			state = "MISSING"
			missing++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Name, state, f.Detail)
		if f.Remedy != "" {
			fmt.Fprintf(tw, "\t\tremedy: %s\n", f.Remedy)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\n%d of %d facilities available\n", len(rep.Facilities)-missing, len(rep.Facilities))
	return nil
}
