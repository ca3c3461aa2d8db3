package main

import (
	"bufio"
	"encoding/json"
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
  iotap mmio stats --json e1000.log | jq 'select(.type == "register")'`,
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
			name := mmioRegNamer(st, noNames)
			var funcs []mmiotrace.FuncStats
			if symbols != "" {
				tab, err := mmioLoadSymbols(symbols, func(s string) { fmt.Fprintf(e.stderr, "iotap: warning: %s\n", s) })
				if err != nil {
					return err
				}
				if st.ZeroPC > 0 {
					fmt.Fprintf(e.stderr, "iotap: warning: mmio stats: %d accesses have no PC (the kernel records PCs only when booted with mmiotrace.trace_pc=1)\n", st.ZeroPC)
				}
				funcs = mmiotrace.ByFunction(st, tab.Name)
			}
			w := bufio.NewWriter(e.stdout)
			defer w.Flush()
			if asJSON {
				enc := json.NewEncoder(w)
				kinds := map[string]int64{}
				for k, n := range st.Kinds {
					if n > 0 {
						kinds[mmiotrace.Kind(k).String()] = n
					}
				}
				enc.Encode(map[string]any{"type": "summary", "lines": st.Lines, "kinds": kinds, "lost": st.Lost, "skipped": st.Skipped, "polling_loops": st.LoopCount})
				for _, m := range st.Maps {
					enc.Encode(map[string]any{"type": "map", "map_id": m.ID, "phys": fmt.Sprintf("0x%x", m.Phys), "len": fmt.Sprintf("0x%x", m.Len), "reads": m.Reads, "writes": m.Writes})
				}
				for i, r := range st.Regs {
					if i >= top {
						break
					}
					enc.Encode(map[string]any{"type": "register", "register": r.Key.String(), "name": name(r.Key), "width": r.Key.Width, "reads": r.Reads, "writes": r.Writes, "last_value": fmt.Sprintf("0x%x", r.LastValue), "poll_loops": r.PollLoops, "poll_reads": r.PollReads})
				}
				for i, f := range funcs {
					if i >= top {
						break
					}
					regs := []map[string]any{}
					for _, r := range f.Regs {
						regs = append(regs, map[string]any{"register": r.Key.String(), "name": name(r.Key), "reads": r.Reads, "writes": r.Writes})
					}
					enc.Encode(map[string]any{"type": "function", "func": f.Func, "reads": f.Reads, "writes": f.Writes, "pcs": f.PCs, "registers": regs})
				}
				for _, l := range st.Loops {
					enc.Encode(map[string]any{"type": "poll", "register": l.Key.String(), "name": name(l.Key), "width": l.Key.Width, "count": l.Count, "first": fmt.Sprintf("0x%x", l.First), "last": fmt.Sprintf("0x%x", l.Last), "what": l.Describe(), "line": l.Line, "start": l.StartTime.String(), "end": l.EndTime.String()})
				}
			} else {
				report.WriteMMIOText(w, st, name, report.MMIOTextOptions{Top: top})
				if symbols != "" {
					mmiotrace.WriteFuncStats(w, funcs, top, 5, name)
				}
			}
			w.Flush()
			return mmioLossCheck(e, st.Lost, st.Skipped, st.FirstSkip, st.Truncated, st.Lines, allowLoss)
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

// mmioRegNamer names registers with the register database shipped for
// their device's PCI id (regdb), "" when there is none or off.
func mmioRegNamer(st *mmiotrace.Stats, off bool) func(mmiotrace.RegKey) string {
	if off {
		return func(mmiotrace.RegKey) string { return "" }
	}
	return report.NameRegisters(st)
}
