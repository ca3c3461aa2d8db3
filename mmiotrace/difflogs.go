package mmiotrace

import (
	"io"
	"os"
)

// DiffLog is one log of a diff of logs (DiffLogs), read as the diff goes.
type DiffLog struct {
	// File and Format name the log in its NDJSON "input" record
	// (AppendNDJSONInput; "" Format: "mmiotrace log").
	File, Format string
	// Loss is Reader.Loss once DiffLogs has read the log: lost events,
	// skipped lines, truncation (of what was read, if the diff gave up).
	Loss []string
	rd   *Reader
}

// NewDiffLog is the log in r (plain or compressed) as 'iotap mmio diff'
// reads each of its logs: lines that do not parse are skipped and counted
// in Loss with the kernel's lost events and a cut end.
func NewDiffLog(r io.Reader, file, format string) *DiffLog {
	rd := NewReader(r)
	rd.SetKeepGoing(true)
	return &DiffLog{File: file, Format: format, rd: rd}
}

// DiffLogs reads a and b side by side and writes their alignment (Diff's,
// giving up beyond maxEdits insertions and deletions) as WriteDiff does;
// with f.JSON the "input" records of a and b come first. Memory does not
// grow with the logs: what is behind the alignment is dropped (see Diff for
// what that means for the alignment). Nothing is written to w unless the
// whole diff succeeds: the output is held until then, in memory up to 4
// MiB and beyond that in a temporary file (os.CreateTemp, removed at the
// end). A read error names the log's File. DiffLogs closes both logs' readers; their Loss is the caller's to
// report.
func DiffLogs(w io.Writer, a, b *DiffLog, maxEdits int, f DiffFormat) error {
	defer a.rd.Close()
	defer b.rd.Close()
	if maxEdits <= 0 {
		maxEdits = 4000
	}
	held := &heldOutput{limit: 4 << 20}
	defer held.discard()
	if f.JSON {
		in := AppendNDJSONInput(nil, a.File, a.Format)
		held.Write(AppendNDJSONInput(in, b.File, b.Format))
	}
	dw := newDiffWriter(held, f)
	sa, sb := newAccessStream(a.rd), newAccessStream(b.rd)
	sa.name, sb.name = a.File, b.File
	wa, wb := streamWindow(sa), streamWindow(sb)
	al := &aligner{a: wa, b: wb, maxEdits: maxEdits,
		emit: func(op *DiffOp) error { dw.op(op); return nil }}
	err := al.run()
	a.Loss, b.Loss = a.rd.Loss(), b.rd.Loss()
	if err != nil {
		return err
	}
	if err := dw.finish(wa.n, wb.n); err != nil {
		return err
	}
	return held.copyTo(w)
}

// heldOutput holds what is written to it, in memory up to limit bytes and
// then in a temporary file, until copyTo.
type heldOutput struct {
	limit int
	mem   []byte
	file  *os.File
	err   error
}

func (h *heldOutput) Write(p []byte) (int, error) {
	if h.err != nil {
		return 0, h.err
	}
	if h.file == nil && len(h.mem)+len(p) <= h.limit {
		h.mem = append(h.mem, p...)
		return len(p), nil
	}
	if h.file == nil {
		h.file, h.err = os.CreateTemp("", "iotap-mmio-diff-*")
		if h.err == nil {
			_, h.err = h.file.Write(h.mem)
		}
		h.mem = nil
		if h.err != nil {
			return 0, h.err
		}
	}
	n, err := h.file.Write(p)
	if err != nil {
		h.err = err
	}
	return n, err
}

// copyTo writes everything held to w.
func (h *heldOutput) copyTo(w io.Writer) error {
	if h.err != nil {
		return h.err
	}
	if h.file == nil {
		_, err := w.Write(h.mem)
		return err
	}
	if _, err := h.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, h.file)
	return err
}

// discard drops what is held.
func (h *heldOutput) discard() {
	h.mem = nil
	if h.file != nil {
		h.file.Close()
		os.Remove(h.file.Name())
		h.file = nil
	}
}
