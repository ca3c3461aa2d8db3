package timeline

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/internal/timerange"
)

// usbSeekMarginNS widens the part of a pcap or pcapng file read through
// its index: cut places a packet by its pcap(ng) timestamp, the timeline
// by the usbmon header's own, which may differ slightly. Events outside
// the window are read and not drawn, as without the index.
const usbSeekMarginNS = 1e9

// seekWindow replaces source i, whose first event was read from the start
// of its file, by one that reads only the window (on the timeline clock,
// with the offsets and shift of merge) through the file's index
// (INPUT.iotapidx, package cut): the events of the window are the same,
// but the bytes before it are not read. It returns the new source and its
// first event's raw time, or nil when the input has no usable index (not
// a plain file, no index, usbmon text whose stamps wrap, PT): the source
// then reads on from where it is. A stale index is ignored by cut with a
// warning (the window is then found by reading from the start).
func seekWindow(ctx context.Context, x *exporter, s Source, win timerange.Window, offset, shift int64) (Source, int64, error) {
	in := s.Info()
	if in.Path == "-" || in.Stream != "" || in.Format == "perf.data" || (in.Kind != KindMMIO && in.Kind != KindEvents && in.Kind != KindUSB) {
		return nil, 0, nil
	}
	warn := func(m string) { x.warn(in, "%s", m) }
	ci, closer, err := cut.OpenFile(in.Path, true, warn)
	if err != nil {
		return nil, 0, nil // read as it is
	}
	if ci.Index == nil || ci.ReaderAt == nil || ci.Index.Format == cut.FormatUSBText {
		closer.Close()
		return nil, 0, nil
	}
	margin := int64(0)
	if in.Kind == KindUSB {
		margin = usbSeekMarginNS
	}
	var spec timerange.Spec
	if win.HasFrom {
		spec.From, spec.HasFrom = timerange.Point{Base: timerange.Absolute, NS: win.From - shift - offset - margin}, true
	}
	if win.HasTo {
		spec.To, spec.HasTo = timerange.Point{Base: timerange.Absolute, NS: win.To - shift - offset + margin}, true
	}
	pr, pw := io.Pipe()
	sc := &seekCloser{pr: pr, f: closer, done: make(chan struct{}), in: in}
	go func() {
		defer close(sc.done)
		res, err := cut.Cut(ctx, ci, pw, cut.Options{Window: spec, Warn: warn})
		if res != nil {
			sc.read, sc.indexed = res.BytesRead, res.Indexed
			if res.Truncated > 0 {
				// the input ends inside a record: the cut stops before it
				sc.trunc = fmt.Sprintf("a record of %d bytes cut short at offset %d", res.Truncated, res.TruncatedAt)
			}
		}
		pw.CloseWithError(err)
	}()
	saved := *in
	ss, err := openers[in.Kind](sc, bufio.NewReaderSize(pr, 256<<10), in, x.opt)
	*in = saved // the opener set what the first opening had set
	if err != nil {
		sc.Close()
		return nil, 0, fmt.Errorf("%s: %w", in.Path, err)
	}
	if len(ss) != 1 {
		for _, n := range ss {
			n.Close()
		}
		return nil, 0, fmt.Errorf("%s: %d streams in a cut of one", in.Path, len(ss))
	}
	s.Close()
	n := ss[0]
	raw, err := n.Next()
	if err != nil && err != io.EOF {
		n.Close()
		return nil, 0, fmt.Errorf("%s: %w", in.Path, err)
	}
	if err == io.EOF {
		return n, 0, io.EOF
	}
	return n, raw, nil
}

// seekCloser ends the cut feeding a source read through the index, and
// counts the bytes it read in the input's stats.
type seekCloser struct {
	pr      *io.PipeReader
	f       io.Closer
	done    chan struct{}
	in      *InputStats
	read    int64
	indexed bool
	trunc   string // the input ends inside a record (cut.Result.Truncated)
	closed  bool
}

func (c *seekCloser) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.pr.Close()
	<-c.done
	c.in.BytesRead += c.read
	c.in.Seeked = c.indexed
	if c.trunc != "" {
		c.in.Truncated, c.in.Truncation = true, c.trunc
	}
	return c.f.Close()
}
