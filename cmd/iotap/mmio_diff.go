package main

import (
	"bufio"
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
				formats[i] = mmioInputFormat(in)
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
			w := bufio.NewWriter(e.stdout)
			defer w.Flush()
			var same, changed, onlyA, onlyB int
			if asJSON {
				c := mmiotrace.DiffCounts{AAccesses: len(seqs[0]), BAccesses: len(seqs[1])}
				b := mmiotrace.AppendNDJSONInput(nil, args[0], formats[0])
				b = mmiotrace.AppendNDJSONInput(b, args[1], formats[1])
				for i := range ops {
					c.Add(&ops[i])
					if ops[i].Op != ' ' || all {
						b = mmiotrace.AppendDiffNDJSON(b, &ops[i])
					}
					if len(b) >= 64<<10 {
						w.Write(b)
						b = b[:0]
					}
				}
				w.Write(c.AppendNDJSON(b))
				return w.Flush()
			}
			for _, op := range ops {
				switch op.Op {
				case ' ':
					same++
					if all {
						fmt.Fprintf(w, "  A:%d B:%d %s\n", op.A.Line, op.B.Line, op.A)
					}
				case '~':
					changed++
					fmt.Fprintf(w, "~ A:%d B:%d %s %s 0x%x", op.A.Line, op.B.Line, op.A.Kind, op.A.Key, op.A.Value)
					if op.A.Count > 1 {
						fmt.Fprintf(w, " (x%d)", op.A.Count)
					}
					fmt.Fprintf(w, " -> 0x%x", op.B.Value)
					if op.B.Count > 1 {
						fmt.Fprintf(w, " (x%d)", op.B.Count)
					}
					fmt.Fprintln(w)
				case '-':
					onlyA++
					fmt.Fprintf(w, "- A:%d %s\n", op.A.Line, op.A)
				case '+':
					onlyB++
					fmt.Fprintf(w, "+ B:%d %s\n", op.B.Line, op.B)
				}
			}
			fmt.Fprintf(w, "A %d accesses, B %d: %d identical, %d same register with other value, %d only in A, %d only in B\n",
				len(seqs[0]), len(seqs[1]), same, changed, onlyA, onlyB)
			w.Flush()
			return lossErr
		},
	}
	c.Flags().BoolVar(&all, "all", false, "also print identical accesses")
	c.Flags().IntVar(&maxEdits, "max-edits", 4000, "give up beyond this many insertions and deletions")
	c.Flags().BoolVar(&allowLoss, "allow-loss", false, "exit 0 even when a log is cut, lost events or had bad lines skipped")
	c.Flags().BoolVar(&asJSON, "json", false, "NDJSON output: one object per difference (with --all, per access), then a summary")
	return c
}
