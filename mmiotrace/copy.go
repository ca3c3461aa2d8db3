package mmiotrace

import (
	"bufio"
	"context"
	"io"
)

// CopyOptions selects the records CopyRecords writes. The zero value
// writes every record.
type CopyOptions struct {
	// Keep reports whether to write a record; nil keeps every record.
	// It is called on one goroutine, in log order, and must not keep rec.
	Keep func(rec *Record) bool
	// Count stops after Count records were written (0: no limit), like
	// tshark -c: records Keep rejects do not count.
	Count uint64
}

// CopyRecords reads the records of r in order and writes what format
// appends for each one opt keeps to w (through a buffer of its own),
// until the end of the log or opt.Count records: 'iotap mmio read' with
// -Y or -c. It returns the number of records written.
//
// The output holds every record written before an error (a bad line
// without keep-going, a format error) and before ctx is cancelled; then
// the error, or ctx.Err(), is returned. r's loss accounting (Lost,
// Skipped, Truncated) covers what was read. Use ConvertLog to convert a
// whole log on several cores.
func CopyRecords(ctx context.Context, r *Reader, w io.Writer, format AppendFunc, opt CopyOptions) (uint64, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	var n uint64
	err := r.Do(func() (err error) {
		n, err = copyRecords(ctx, r, bw, format, opt)
		return err
	})
	if we, ok := err.(*writeError); ok {
		return n, we.err
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return n, err
}

// writeError is an error of the output, returned without a flush.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }

// copyRecords is CopyRecords' loop, inside Reader.Do: on a mapped log
// (Open) the records' slices alias the mapping, and a file cut shorter
// while they are read or formatted is an error, not a crash.
func copyRecords(ctx context.Context, r *Reader, bw *bufio.Writer, format AppendFunc, opt CopyOptions) (n uint64, err error) {
	var (
		rec  Record
		line []byte
	)
	for i := 0; opt.Count == 0 || n < opt.Count; i++ {
		if i&0xffff == 0 && ctx.Err() != nil {
			return n, ctx.Err()
		}
		if err = r.ReadInto(&rec); err != nil {
			if err == io.EOF {
				err = nil
			}
			return n, err
		}
		if opt.Keep != nil && !opt.Keep(&rec) {
			continue
		}
		if line, err = format(line[:0], &rec); err != nil {
			return n, err
		}
		if _, err = bw.Write(line); err != nil {
			return n, &writeError{err}
		}
		n++
	}
	return n, nil
}
