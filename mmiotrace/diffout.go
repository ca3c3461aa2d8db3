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
	dw := newDiffWriter(w, f)
	for i := range ops {
		dw.op(&ops[i])
	}
	return dw.finish(len(a), len(b))
}

// diffWriter writes the steps of an alignment one at a time, as WriteDiff
// writes them, and the summary at the end.
type diffWriter struct {
	bw  *bufio.Writer
	f   DiffFormat
	c   DiffCounts
	buf []byte
}

func newDiffWriter(w io.Writer, f DiffFormat) *diffWriter {
	return &diffWriter{bw: bufio.NewWriterSize(w, 64<<10), f: f}
}

// op counts op and writes it (an identical access only with f.All).
// Write errors surface in finish.
func (dw *diffWriter) op(op *DiffOp) {
	dw.c.Add(op)
	if op.Op == ' ' && !dw.f.All {
		return
	}
	bw := dw.bw
	if dw.f.JSON {
		dw.buf = AppendDiffNDJSON(dw.buf[:0], op)
		bw.Write(dw.buf)
		return
	}
	switch op.Op {
	case ' ':
		fmt.Fprintf(bw, "  A:%d B:%d %s\n", op.A.Line, op.B.Line, op.A)
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

// finish writes the summary, na and nb the accesses of A and B, and
// flushes.
func (dw *diffWriter) finish(na, nb int) error {
	c := &dw.c
	c.AAccesses, c.BAccesses = na, nb
	if dw.f.JSON {
		dw.bw.Write(c.AppendNDJSON(dw.buf[:0]))
	} else {
		fmt.Fprintf(dw.bw, "A %d accesses, B %d: %d identical, %d same register with other value, %d only in A, %d only in B\n",
			c.AAccesses, c.BAccesses, c.Same, c.Changed, c.OnlyA, c.OnlyB)
	}
	return dw.bw.Flush()
}
