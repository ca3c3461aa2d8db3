package usbmon

import (
	"context"
	"errors"
	"io"
	"time"
)

// CopyResult is what [Copy] did.
type CopyResult struct {
	Events  int    // events written
	Read    int    // events read (more than Events when filtered)
	Dropped uint64 // events the input records as dropped by the kernel (pcapng isb_ifdrop)
	Skipped int    // unreadable text lines the reader skipped (ReaderOptions.KeepGoing)
	// ReadErr is the error that ended reading, nil at the end of the input
	// (ErrTruncated for a cut file: the events before the cut are written).
	ReadErr error
}

// Copy writes every event of r to w and flushes w: 'iotap usb convert'.
// The drops the input records are carried into a pcapng output as
// interface statistics. Reading stops early, with ctx's error as ReadErr,
// when ctx ends. The returned error is w's (write, statistics, flush).
func Copy(ctx context.Context, w Writer, r Reader) (CopyResult, error) {
	return CopyIf(ctx, w, r, nil)
}

// CopyIf is Copy of the events keep selects (all when keep is nil):
// 'iotap usb convert --filter'. keep sees every event, in order.
func CopyIf(ctx context.Context, w Writer, r Reader, keep func(*Event) bool) (CopyResult, error) {
	var res CopyResult
	var ev Event
	for {
		if res.Read&4095 == 0 && ctx.Err() != nil {
			res.ReadErr = ctx.Err()
			break
		}
		err := r.ReadInto(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			res.ReadErr = err
			break
		}
		res.Read++
		if keep != nil && !keep(&ev) {
			continue
		}
		if err := w.Write(&ev); err != nil {
			return res, err
		}
		res.Events++
	}
	if s, ok := r.(Skipper); ok {
		res.Skipped = s.Skipped()
	}
	if d, ok := r.(interface{ Dropped() uint64 }); ok {
		res.Dropped = d.Dropped()
		if ng, ok := w.(*PcapngWriter); ok && res.Dropped > 0 {
			if err := ng.WriteStats(time.Now(), res.Dropped); err != nil {
				return res, err
			}
		}
	}
	return res, w.Flush()
}

// Loss lists what the input lost, as 'iotap usb convert' reports it: a
// truncated input (the events before the cut were copied), unreadable
// lines skipped, events the kernel dropped. A read error other than
// truncation is returned as err.
func (r CopyResult) Loss() (lost []string, err error) {
	return InputLoss(r.ReadErr, uint64(r.Skipped), r.Dropped)
}
