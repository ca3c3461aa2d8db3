package mmiotrace

import "io"

// DiffLog is one log of a diff of logs (DiffLogs): its register accesses
// and what the sequence misses.
type DiffLog struct {
	// File and Format name the log in its NDJSON "input" record
	// (AppendNDJSONInput; "" Format: "mmiotrace log").
	File, Format string
	Accesses     []Access // ReadAccesses
	Loss         []string // Reader.Loss: lost events, skipped lines, truncation
}

// ReadDiffLog reads the accesses of the log in r (plain or compressed) as
// 'iotap mmio diff' reads each of its logs: lines that do not parse are
// skipped and counted in Loss with the kernel's lost events and a cut
// end. A read error ends it.
func ReadDiffLog(r io.Reader, file, format string) (*DiffLog, error) {
	rd := NewReader(r)
	defer rd.Close()
	rd.SetKeepGoing(true)
	acc, err := ReadAccesses(rd)
	if err != nil {
		return nil, err
	}
	return &DiffLog{File: file, Format: format, Accesses: acc, Loss: rd.Loss()}, nil
}

// DiffLogs aligns the accesses of a and b (Diff, giving up beyond
// maxEdits insertions and deletions) and writes the alignment (WriteDiff);
// with f.JSON the "input" records of a and b come first. The logs' Loss
// is the caller's to report.
func DiffLogs(w io.Writer, a, b *DiffLog, maxEdits int, f DiffFormat) error {
	ops, err := Diff(a.Accesses, b.Accesses, maxEdits)
	if err != nil {
		return err
	}
	if f.JSON {
		in := AppendNDJSONInput(nil, a.File, a.Format)
		if _, err := w.Write(AppendNDJSONInput(in, b.File, b.Format)); err != nil {
			return err
		}
	}
	return WriteDiff(w, a.Accesses, b.Accesses, ops, f)
}
