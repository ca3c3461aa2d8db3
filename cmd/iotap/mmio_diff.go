package main

import (
	"fmt"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/spf13/cobra"
)

func newMMIODiffCmd(e *env) *cobra.Command {
	var (
		all, asJSON, allowLoss bool
		maxEdits               int
	)
	c := &cobra.Command{
		Use: "diff [flags] A B",
		Example: `  iotap mmio diff good.log bad.log
  iotap mmio diff --json --max-edits 10000 good.log.zst bad.log.zst | jq 'select(.kind == "mmio_diff_summary")'`,
		Short: "Align two mmiotrace logs by register sequence and show the differences",
		Long: `Compare the register accesses of two logs, ignoring timestamps and map ids.
Accesses are named PCIADDR/BAR+OFFSET (or by physical address outside known
BARs); runs of identical reads are collapsed (xN). The sequences are aligned
by register (kind, width, location) with Myers' algorithm; the output shows

  - A:LINE ...        only in A
  + B:LINE ...        only in B
  ~ A:LINE B:LINE ... same register, other value or repeat count

and, with --all, the identical accesses too. A summary ends the output.

--json writes NDJSON: an "input" record per log, one "mmio_diff" record per
line above ("op" is "same", "changed", "only_a" or "only_b") and a final
"mmio_diff_summary" (fields: docs/ndjson.md).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var seqs [2][]mmiotrace.Access
			var formats [2]string
			var lossErr error // reported after the diff of what was read
			for i, p := range args {
				in, err := mmioOpenMetered(e, "mmio diff", p, false)
				if err != nil {
					return err
				}
				formats[i] = in.Format()
				rd := mmiotrace.NewReader(in)
				rd.SetKeepGoing(true)
				seqs[i], err = mmiotrace.ReadAccesses(rd)
				rd.Close()
				in.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				if lerr := mmioLoss(e, rd.Loss(), allowLoss); lerr != nil && lossErr == nil {
					lossErr = fmt.Errorf("%s: %w", p, lerr)
				}
			}
			ops, err := mmiotrace.Diff(seqs[0], seqs[1], maxEdits)
			if err != nil {
				return err
			}
			if asJSON {
				b := mmiotrace.AppendNDJSONInput(nil, args[0], formats[0])
				if _, err := e.stdout.Write(mmiotrace.AppendNDJSONInput(b, args[1], formats[1])); err != nil {
					return err
				}
			}
			if err := mmiotrace.WriteDiff(e.stdout, seqs[0], seqs[1], ops, mmiotrace.DiffFormat{All: all, JSON: asJSON}); err != nil {
				return err
			}
			return lossErr
		},
	}
	c.Flags().BoolVar(&all, "all", false, "also print identical accesses")
	c.Flags().IntVar(&maxEdits, "max-edits", 4000, "give up beyond this many insertions and deletions")
	c.Flags().BoolVar(&allowLoss, "allow-loss", false, "exit 0 even when a log is cut, lost events or had bad lines skipped")
	c.Flags().BoolVar(&asJSON, "json", false, "NDJSON output: one object per difference (with --all, per access), then a summary")
	return c
}
