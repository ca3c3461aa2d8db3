package main

import (
	"bufio"
	"encoding/json"
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
  iotap mmio diff --json --max-edits 10000 good.log.zst bad.log.zst | jq 'select(.type == "summary")'`,
		Short: "Align two mmiotrace logs by register sequence and show the differences",
		Long: `Compare the register accesses of two logs, ignoring timestamps and map ids.
Accesses are named PCIADDR/BAR+OFFSET (or by physical address outside known
BARs); runs of identical reads are collapsed (xN). The sequences are aligned
by register (kind, width, location) with Myers' algorithm; the output shows

  - A:LINE ...        only in A
  + B:LINE ...        only in B
  ~ A:LINE B:LINE ... same register, other value or repeat count

and, with --all, the identical accesses too. A summary ends the output.

--json writes NDJSON: one {"type":"op"} object per line above ("op" is
"same", "changed", "only_a" or "only_b") and a final {"type":"summary"}
(fields: docs/mmio.md).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var seqs [2][]mmiotrace.Access
			var lossErr error // reported after the diff of what was read
			for i, p := range args {
				in, err := mmioOpenMetered(e, "mmio diff", p, false)
				if err != nil {
					return err
				}
				rd := mmiotrace.NewReader(in)
				rd.SetKeepGoing(true)
				seqs[i], err = mmiotrace.ReadAccesses(rd)
				rd.Close()
				in.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				if lerr := mmioLossCheck(e, rd.Lost(), rd.Skipped(), rd.FirstSkipError(), rd.Truncated(), rd.Line(), allowLoss); lerr != nil && lossErr == nil {
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
				enc := json.NewEncoder(w)
				for _, op := range ops {
					j := mmioDiffJSON{Type: "op"}
					switch op.Op {
					case ' ':
						same++
						j.Op = "same"
					case '~':
						changed++
						j.Op = "changed"
					case '-':
						onlyA++
						j.Op = "only_a"
					case '+':
						onlyB++
						j.Op = "only_b"
					}
					if op.Op == ' ' && !all {
						continue
					}
					acc := op.A
					if acc == nil {
						acc = op.B
					}
					j.Kind, j.Register, j.Width = acc.Kind.String(), acc.Key.String(), acc.Key.Width
					if op.A != nil {
						j.ALine, j.AValue, j.ACount = op.A.Line, mmioHex(op.A.Value), op.A.Count
					}
					if op.B != nil {
						j.BLine, j.BValue, j.BCount = op.B.Line, mmioHex(op.B.Value), op.B.Count
					}
					enc.Encode(j)
				}
				return enc.Encode(map[string]any{"type": "summary", "a_accesses": len(seqs[0]), "b_accesses": len(seqs[1]),
					"same": same, "changed": changed, "only_a": onlyA, "only_b": onlyB})
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

// mmioDiffJSON is one alignment step of --json output; the a_ fields are
// absent for "only_b", the b_ fields for "only_a".
type mmioDiffJSON struct {
	Type     string `json:"type"` // "op"
	Op       string `json:"op"`   // same, changed, only_a, only_b
	Kind     string `json:"kind"` // R or W
	Register string `json:"register"`
	Width    uint8  `json:"width"`
	ALine    int64  `json:"a_line,omitempty"`
	AValue   string `json:"a_value,omitempty"`
	ACount   int64  `json:"a_count,omitempty"`
	BLine    int64  `json:"b_line,omitempty"`
	BValue   string `json:"b_value,omitempty"`
	BCount   int64  `json:"b_count,omitempty"`
}
