package main

import (
	"github.com/iotap/iotap/internal/doctor"
	"github.com/spf13/cobra"
)

func newDoctorCmd(e *env) *cobra.Command {
	var asJSON bool
	var root string
	c := &cobra.Command{
		Use: "doctor",
		Example: `  iotap doctor
  sudo iotap doctor --json | jq -c 'select(.kind == "doctor_facility" and (.available | not))'`,
		Short: "Say what this machine can trace, and how to get the rest",
		Long: `doctor checks each facility iotap uses (tracefs, debugfs, usbmon text and binary,
mmiotrace, user_events, intel_pt, perf_event, privileges) and prints whether it
is available, what was found, and the exact remedy when it is not.

--json prints NDJSON (docs/ndjson.md): an "input" record, one
{"kind":"doctor_facility","name":…,"available":…,"detail":…,"remedy":…} per
facility and a final {"kind":"doctor_summary","kernel":…,"facilities":N,
"missing":N}, a stable interface for scripts. Missing facilities are not an error: the exit
code is 0 whenever the checks could run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep := doctor.Check(doctor.Running(root))
			if asJSON {
				_, err := e.stdout.Write(rep.AppendNDJSON(nil, root))
				return err
			}
			return rep.WriteText(e.stdout)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as NDJSON (docs/ndjson.md)")
	c.Flags().StringVar(&root, "root", "", "inspect a system tree mounted at this directory instead of /")
	_ = c.Flags().MarkHidden("root")
	return c
}
