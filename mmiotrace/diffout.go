package mmiotrace

import (
	"bufio"
	"fmt"
	"io"
)

// DiffFormat chooses what WriteDiff writes.
type DiffFormat struct {
	All  bool // the identical accesses too, not only the differences
	JSON bool // NDJSON: mmio_diff records and the mmio_diff_summary
}

// WriteDiff writes ops, the alignment of the access sequences a and b
// (Diff), as 'iotap mmio diff' prints it: a line per difference ("- A:LINE
// ACCESS" only in A, "+ B:LINE ACCESS" only in B, "~ A:LINE B:LINE KIND
// LOCATION 0xVALUE -> 0xVALUE" the same register with another value or
// repeat count; with f.All "  A:LINE B:LINE ACCESS" for each identical
// access too), then a summary line with the counts. With f.JSON it
// writes an mmio_diff record per line instead and an mmio_diff_summary
// record (docs/ndjson.md); the input records naming the logs are the
// caller's to write first.
func WriteDiff(w io.Writer, a, b []Access, ops []DiffOp, f DiffFormat) error {
	bw := bufio.NewWriter(w)
	c := DiffCounts{AAccesses: len(a), BAccesses: len(b)}
	if f.JSON {
		var buf []byte
		for i := range ops {
			c.Add(&ops[i])
			if ops[i].Op != ' ' || f.All {
				buf = AppendDiffNDJSON(buf, &ops[i])
			}
			if len(buf) >= 64<<10 {
				bw.Write(buf)
				buf = buf[:0]
			}
		}
		bw.Write(c.AppendNDJSON(buf))
		return bw.Flush()
	}
	for _, op := range ops {
		c.Add(&op)
		switch op.Op {
		case ' ':
			if f.All {
				fmt.Fprintf(bw, "  A:%d B:%d %s\n", op.A.Line, op.B.Line, op.A)
			}
		case '~':
			fmt.Fprintf(bw, "~ A:%d B:%d %s %s 0x%x", op.A.Line, op.B.Line, op.A.Kind, op.A.Key, op.A.Value)
			if op.A.Count > 1 {
				fmt.Fprintf(bw, " (x%d)", op.A.Count)
			}
			fmt.Fprintf(bw, " -> 0x%x", op.B.Value)
			if op.B.Count > 1 {
				fmt.Fprintf(bw, " (x%d)", op.B.Count)
			}
			fmt.Fprintln(bw)
		case '-':
			fmt.Fprintf(bw, "- A:%d %s\n", op.A.Line, op.A)
		case '+':
			fmt.Fprintf(bw, "+ B:%d %s\n", op.B.Line, op.B)
		}
	}
	fmt.Fprintf(bw, "A %d accesses, B %d: %d identical, %d same register with other value, %d only in A, %d only in B\n",
		c.AAccesses, c.BAccesses, c.Same, c.Changed, c.OnlyA, c.OnlyB)
	return bw.Flush()
}
