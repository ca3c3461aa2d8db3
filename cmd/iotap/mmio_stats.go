package main

import (
	"fmt"

	"github.com/iotap/iotap/internal/mapfile"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/report"
	"github.com/spf13/cobra"
)

func newMMIOStatsCmd(e *env) *cobra.Command {
	var (
		sopt mmiotrace.StatsOptions
		opt  report.MMIOStatsOptions
		loss lossFlag
		syms symbolsFlag
	)
	c := &cobra.Command{
		Use: "stats [flags] FILE",
		Example: `  iotap mmio stats e1000.log.zst
  iotap mmio stats --top 5 --symbols e1000.tar.gz e1000.log
  iotap mmio stats --json e1000.log | jq 'select(.kind == "mmio_register")'`,
		Short: "Count accesses per register and map, find hot registers and polling loops",
		Long: `Summarise an mmiotrace log: records per kind, accesses per map id, the
hottest registers (named PCIADDR/BAR+OFFSET when a PCIDEV record describes
the BAR) and polling loops: runs of reads of one register with no other
access in between, collapsed as "read X 1532 times until bit 3 set".`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := mmioOpenMetered(e, "mmio stats", args[0], false)
			if err != nil {
				return err
			}
			defer in.Close()
			st, err := mmiotrace.Analyze(in, sopt)
			if err != nil {
				return fmt.Errorf("mmio stats: %w", mapfile.Named(args[0], err))
			}
			opt.File, opt.Format, opt.Warn = args[0], in.Format(), e.warn
			if opt.Symbols, err = syms.load(e.warn); err != nil {
				return err
			}
			if err := report.WriteMMIOStats(e.stdout, st, opt); err != nil {
				return err
			}
			return loss.mmioIn(e, args[0], st.Loss())
		},
	}
	f := c.Flags()
	f.IntVar(&opt.Top, "top", 20, "hot registers to list")
	f.IntVar(&sopt.KeepLoops, "loops", 20, "longest polling loops to list")
	f.Int64Var(&sopt.MinLoop, "min-loop", 4, "reads in a row that make a polling loop")
	f.BoolVar(&opt.JSON, "json", false, "NDJSON output")
	f.BoolVar(&sopt.KeepGoing, "keep-going", true, mmioKeepGoingHelp)
	loss.add(f, "exit 0 even when the log records lost events")
	syms.add(f, "")
	f.BoolVar(&opt.NoNames, "no-names", false, "do not name registers with the shipped register databases")
	return c
}
