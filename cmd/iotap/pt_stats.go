package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/intelpt"
)

func newPTStatsCmd(e *env) *cobra.Command {
	var (
		asJSON, allowLoss bool
		workers           int
		timing            ptTiming
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
			var items []intelpt.StreamStats
			if in.Stream != nil {
				// A raw file: summarised as it is read, in segments between
				// PSBs on several cores when large enough (same result).
				m, ra := e.meter("iotap: pt stats", in.Size(), false), io.ReaderAt(nil)
				if in.File != os.Stdin {
					ra = m.ReaderAt(in.File)
				}
				s, err := intelpt.ComputeStreamStats(e.ctx, m.Reader(in.Stream), ra, in.Size(), timing.Apply(in.Config()), workers)
				if err != nil {
					return fmt.Errorf("pt stats: %s: %w", args[0], err)
				}
				if s.PSBs == 0 { // standard input (a file's head was checked)
					return fmt.Errorf("pt stats: %s: %w: no PSB in %d bytes", args[0], intelpt.ErrNoPSB, s.Bytes)
				}
				items = []intelpt.StreamStats{{Name: args[0], CPU: -1, Stats: s}}
			} else {
				// A perf.data's streams are read from the file as they come.
				if items, err = intelpt.ReadInputStats(e.ctx, in.Loaded, args[0], timing.Apply(in.Config())); err != nil {
					return fmt.Errorf("pt stats: %s: %w", args[0], err)
				}
			}
			if err := intelpt.WriteStats(e.stdout, args[0], items, in.Perf(), asJSON); err != nil {
				return err
			}
			return e.dataLoss(allowLoss, "pt stats: data lost: ", intelpt.StatsLoss(items, in.Perf()), "--allow-loss to accept")
		},
	}
	fl := c.Flags()
	fl.BoolVar(&asJSON, "json", false, "one JSON object per stream")
	fl.BoolVar(&allowLoss, "allow-loss", false, "exit 0 even when data was lost")
	fl.IntVar(&workers, "workers", 0, "decoding goroutines, each on a segment between PSBs (0: all cores for a raw trace of 16 MiB or more on more than 2 cores, else 1)")
	timing.flags(fl, 0)
	return c
}
