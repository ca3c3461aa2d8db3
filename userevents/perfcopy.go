package userevents

import (
	"bufio"
	"context"
	"errors"
	"io"
)

// CopyOptions chooses what PerfDataReader.CopyTo writes. The zero value
// writes every sample as text.
type CopyOptions struct {
	// JSON writes NDJSON records (AppendNDJSON) instead of text lines
	// (AppendText). The input record is the caller's to write first.
	JSON bool
	// Keep reports whether to write a sample; nil keeps every sample. It
	// must not keep rec (its fields point into the reader's buffer).
	Keep func(rec *Recorded) bool
}

// CopyTo writes the tracepoint samples of the file that opt keeps to w
// (through a buffer of its own), in file order, as 'iotap events read'
// prints them, and returns the number written. It ends at the end of the
// file, or at a broken record structure (a *PerfDataError), or when ctx
// is cancelled (ctx.Err()), with what was written before it in w. Stats,
// Warnings and Errors tell what was lost or could not be decoded.
func (p *PerfDataReader) CopyTo(ctx context.Context, w io.Writer, opt CopyOptions) (uint64, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	var (
		rec  Recorded
		line []byte
		n    uint64
		err  error
	)
	for i := 0; ; i++ {
		if i&1023 == 0 && ctx.Err() != nil {
			err = ctx.Err()
			break
		}
		if err = p.Read(&rec); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			break
		}
		if opt.Keep != nil && !opt.Keep(&rec) {
			continue
		}
		if opt.JSON {
			line = AppendNDJSON(line[:0], &rec)
		} else {
			line = append(AppendText(line[:0], &rec), '\n')
		}
		if _, err = bw.Write(line); err != nil {
			return n, err
		}
		n++
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return n, err
}
