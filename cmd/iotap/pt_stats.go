package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/intelpt"
)

func newPTStatsCmd(e *env) *cobra.Command {
	var (
		asJSON    bool
		allowLoss lossFlag
		workers   int
		timing    ptTiming
	)
	c := &cobra.Command{
		Use:   "stats [flags] FILE",
		Short: "Summarise a PT trace: packets by kind, PSB spacing, overflows, errors, time span",
		Long: `Summarise a PT trace (raw or perf.data, one summary per CPU stream): bytes,
packets by kind, PSB count and spacing in bytes, overflows (OVF: the CPU
dropped trace data), decoding errors with their offsets, bytes skipped
(before the first PSB, after errors, truncated tail) and the TSC span.

The time span is estimated like 'pt dump --time': TSC packets, plus TMA/MTC
when --mtc-freq and --cpuid-0x15.eax/ebx are known and CYC once calibrated
(perf.data and capture.json record these parameters).
Exit status 3 when the CPU or perf lost data (OVF, truncated tail, perf
loss records) or decoding errors skipped bytes (stderr says how many
errors, the first one's offset and the bytes skipped) unless --allow-loss.`,
		Example: `  iotap pt stats trace.pt
  iotap pt stats --json perf.data`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			in, err := ptOpen(args[0], true)
			if err != nil {
				return err
			}
			defer in.Close()
			// A raw file is summarised as it is read, in segments between
			// PSBs on several cores when large enough (same result); a
			// perf.data's streams are read from the file as they come.
			items, err := in.Stats(e.ctx, timing.Apply(in.Config()), workers, func(r io.Reader, ra io.ReaderAt) (io.Reader, io.ReaderAt) {
				m := e.meter("iotap: pt stats", in.Size(), false)
				return m.Reader(r), m.ReaderAt(ra)
			})
			if err != nil {
				return fmt.Errorf("pt stats: %w", err)
			}
			if err := intelpt.WriteStats(e.stdout, args[0], items, in.Perf(), asJSON); err != nil {
				return err
			}
			return allowLoss.check(e, "pt stats: data lost: ", intelpt.StatsLoss(items, in.Perf()), "--allow-loss to accept")
		},
	}
	fl := c.Flags()
	fl.BoolVar(&asJSON, "json", false, "one JSON object per stream")
	allowLoss.add(fl, "exit 0 even when data was lost")
	workersVar(fl, &workers, "decoding goroutines, each on a segment between PSBs (0: all cores for a raw trace of 16 MiB or more on more than 2 cores, else 1)")
	timing.flags(fl, 0)
	return c
}
