package main

import (
	"bufio"
	"fmt"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/spf13/cobra"
)

func newMMIODiffCmd(e *env) *cobra.Command {
	var (
		all      bool
		maxEdits int
	)
	c := &cobra.Command{
		Use:   "diff [flags] A B",
		Short: "Align two mmiotrace logs by register sequence and show the differences",
		Long: `Compare the register accesses of two logs, ignoring timestamps and map ids.
Accesses are named PCIADDR/BAR+OFFSET (or by physical address outside known
BARs); runs of identical reads are collapsed (xN). The sequences are aligned
by register (kind, width, location) with Myers' algorithm; the output shows

  - A:LINE ...        only in A
  + B:LINE ...        only in B
  ~ A:LINE B:LINE ... same register, other value or repeat count

and, with --all, the identical accesses too. A summary ends the output.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var seqs [2][]mmiotrace.Access
			for i, p := range args {
				in, err := mmioOpenInput(p)
				if err != nil {
					return err
				}
				seqs[i], err = mmiotrace.Accesses(in)
				in.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
			}
			ops, err := mmiotrace.Diff(seqs[0], seqs[1], maxEdits)
			if err != nil {
				return err
			}
			w := bufio.NewWriter(e.stdout)
			defer w.Flush()
			var same, changed, onlyA, onlyB int
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
			return nil
		},
	}
	c.Flags().BoolVar(&all, "all", false, "also print identical accesses")
	c.Flags().IntVar(&maxEdits, "max-edits", 4000, "give up beyond this many insertions and deletions")
	return c
}
