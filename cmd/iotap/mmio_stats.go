package main

import (
	"fmt"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/report"
	"github.com/spf13/cobra"
)

func newMMIOStatsCmd(e *env) *cobra.Command {
	var (
		top, loops        int
		minLoop           int64
		asJSON, keepGoing bool
		allowLoss         bool
		noNames           bool
		symbols           string
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
			st, err := mmiotrace.Analyze(in, mmiotrace.StatsOptions{MinLoop: minLoop, KeepLoops: loops, KeepGoing: keepGoing})
			if err != nil {
				return err
			}
			opt := report.MMIOStatsOptions{JSON: asJSON, File: args[0], Format: in.Format(), Top: top, NoNames: noNames}
			if symbols != "" {
				if opt.Symbols, err = mmioLoadSymbols(symbols, func(s string) { fmt.Fprintf(e.stderr, "iotap: warning: %s\n", s) }); err != nil {
					return err
				}
				if st.ZeroPC > 0 {
					fmt.Fprintf(e.stderr, "iotap: warning: mmio stats: %d accesses have no PC (the kernel records PCs only when booted with mmiotrace.trace_pc=1)\n", st.ZeroPC)
				}
			}
			if err := report.WriteMMIOStats(e.stdout, st, opt); err != nil {
				return err
			}
			return mmioLoss(e, mmiotrace.LossMessages(st.Lost, st.Skipped, st.FirstSkip, st.Truncated, st.Lines), allowLoss)
		},
	}
	f := c.Flags()
	f.IntVar(&top, "top", 20, "hot registers to list")
	f.IntVar(&loops, "loops", 20, "longest polling loops to list")
	f.Int64Var(&minLoop, "min-loop", 4, "reads in a row that make a polling loop")
	f.BoolVar(&asJSON, "json", false, "NDJSON output")
	f.BoolVar(&keepGoing, "keep-going", true, mmioKeepGoingHelp)
	f.BoolVar(&allowLoss, "allow-loss", false, "exit 0 even when the log records lost events")
	f.StringVar(&symbols, "symbols", "", mmioSymbolsHelp)
	f.BoolVar(&noNames, "no-names", false, "do not name registers with the shipped register databases")
	return c
}
