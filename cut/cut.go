package cut

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/iotap/iotap/internal/timerange"
)

// Input is a trace to cut or index.
type Input struct {
	// Name names the input in messages.
	Name string
	// ReaderAt and Size give a seekable, uncompressed input (a file): the
	// index can then be used to read only the window.
	ReaderAt io.ReaderAt
	Size     int64
	// ModTime is the input's modification time (ns since the epoch), 0
	// when unknown; an index made before a change is ignored.
	ModTime int64
	// Open, for inputs without ReaderAt (compressed files), returns the
	// decompressed input from its start; it is called once per pass.
	Open func() (io.ReadCloser, error)
	// PT times a raw Intel PT input (nil: TSC ticks as ns, the decoder's
	// default timing parameters).
	PT *PTTiming
	// Index is the input's index (LoadIndex), nil when there is none. An
	// index that does not match the input is ignored with a warning.
	Index *Index
}

// Options control Cut.
type Options struct {
	// Window is the window to keep ([from, to)); an unset Spec keeps all.
	Window timerange.Spec
	// Warn receives warnings (an index ignored, ...); nil drops them.
	Warn func(msg string)
}

// Result describes a cut.
type Result struct {
	Format Format
	// Window is the window resolved on the trace's clock (ns).
	Window timerange.Window
	// Start is the time of the input's first timed record (HasStart).
	Start    int64
	HasStart bool
	// Records counts the records read, Kept those written (headers too).
	Records, Kept int64
	// Events counts the event records written.
	Events int64
	// Lost is the sum of the loss the written records report (mmiotrace
	// "Lost N events." markers) and, for pcapng, the drops the written
	// interface statistics count inside the window.
	Lost uint64
	// BytesRead is the number of input bytes read (all passes).
	BytesRead int64
	// Indexed says the index was used to seek.
	Indexed bool
	// InputStart and InputEnd are, for Intel PT, the byte range of the
	// input that was written: from a PSB to a PSB (or the end).
	InputStart, InputEnd int64
	// Truncated is the number of bytes of a record the input ends inside
	// (a capture killed mid-write), 0 when it ends cleanly; TruncatedAt is
	// that record's offset. The records before it are cut as usual; the
	// half record is not written and, when its time (that of the last
	// timed record before it, as for any record without a time) is in the
	// window, counts as one lost event in Lost.
	Truncated, TruncatedAt int64
	// HalfLost says that Lost counts the record the input ends inside
	// (its time in the window); HalfKept that it is written, in place,
	// without its time (a text line cut short: its reader says so), not
	// left out (a binary record: pcap, pcapng).
	HalfLost, HalfKept bool
	// End is the time of the input's last timed record, HasEnd that
	// the cut read the input to its end and found one (PastEnd).
	End    int64
	HasEnd bool
}

// PastEnd says that the window starts after the input's last record:
// the cut holds no events because the input ended before the window.
func (r *Result) PastEnd() bool {
	return r.Events == 0 && r.Window.HasFrom && r.HasEnd && r.End < r.Window.From
}

// pastEnd is what a reader of the window's cut of the input named name
// says when the window starts after its last record (PastEnd); "" else.
func (r *Result) pastEnd(name string, spec timerange.Spec) string {
	if r == nil || !r.PastEnd() {
		return ""
	}
	return timerange.PastEndMessage(name, spec)
}

// Cut writes to w the records of in that fall inside opt.Window, in the
// input's own format: what a reader needs to interpret them (file and
// interface headers, the mmiotrace header and MAP lines before the end of
// the window) and every event record whose time is in [from, to). Records
// without their own time (pcapng simple packets, damaged lines) take the
// time of the last timed record before them. A window with no events
// gives a valid file holding only the headers.
func Cut(ctx context.Context, in Input, w io.Writer, opt Options) (*Result, error) {
	res := &Result{}
	if in.ReaderAt != nil {
		// The passes (format, clock, cut) read the input's head once.
		in.ReaderAt = &headCache{ra: in.ReaderAt, size: in.Size, n: &res.BytesRead}
	}
	c := &cutter{in: in, res: res, warn: opt.Warn}
	if c.warn == nil {
		c.warn = func(string) {}
	}
	f, err := c.sniff()
	if err != nil {
		if c.perfData() {
			return c.cutPerfData(ctx, opt.Window, w)
		}
		return res, err
	}
	res.Format = f
	if f == FormatPT {
		bw := bufio.NewWriterSize(w, 256<<10)
		if err := c.cutPT(ctx, opt.Window, bw); err != nil {
			return res, err
		}
		return res, bw.Flush()
	}
	ix := in.Index
	if ix != nil {
		if err := ix.matches(in, f); err != nil {
			c.warn(fmt.Sprintf("%s: index ignored: %v", in.Name, err))
			ix = nil
		}
	}
	clock, err := c.clock(ctx, f, ix, opt.Window)
	if err != nil {
		return res, err
	}
	win, err := opt.Window.Resolve(clock)
	if err != nil {
		return res, &WindowError{Input: in.Name, Err: err}
	}
	res.Window = win
	bw := bufio.NewWriterSize(w, 256<<10)
	if ix != nil {
		err = c.cutIndexed(ctx, f, ix, win, bw)
		if errors.Is(err, errStaleCheckpoint) {
			// Nothing was written yet: every check precedes the first write.
			c.warn(fmt.Sprintf("%s: index ignored: %v", in.Name, err))
			res.Records, res.Kept, res.Events, res.Lost, res.Indexed = 0, 0, 0, 0, false
			c.drops = nil
			ix = nil
		} else if err != nil {
			return res, err
		}
	}
	if ix == nil {
		r, closeFn, err := c.open(0, -1)
		if err != nil {
			return res, err
		}
		err = c.run(ctx, newScanner(f), r, 0, NoTime, win, bw)
		closeFn()
		if err != nil {
			return res, err
		}
	}
	return res, bw.Flush()
}

var errStaleCheckpoint = errors.New("the input changed where the index points")

// perfData says whether the input is a perf.data file.
func (c *cutter) perfData() bool {
	r, closeFn, err := c.open(0, 8)
	if err != nil {
		return false
	}
	defer closeFn()
	b := make([]byte, 8)
	_, err = io.ReadFull(r, b)
	return err == nil && string(b) == "PERFILE2"
}

// cutPerfData cuts the Intel PT of a perf.data input (CutPerfDataPT).
func (c *cutter) cutPerfData(ctx context.Context, spec timerange.Spec, w io.Writer) (*Result, error) {
	if c.in.ReaderAt != nil {
		// Read as it is cut, never held (the file counts once in
		// BytesRead, as when it was read whole).
		read := c.res.BytesRead + c.in.Size
		res, err := CutPerfDataPTReaderAt(ctx, c.in.ReaderAt, c.in.Size, spec, w)
		if res != nil {
			res.BytesRead = read
		}
		return res, c.named(err)
	}
	// A compressed perf.data: decompressed into a temporary file, removed
	// at once where the system allows it, and cut from it as a file is
	// (it was read whole, into memory).
	r, closeFn, err := c.open(0, -1)
	if err != nil {
		return c.res, err
	}
	tmp, err := os.CreateTemp("", "iotap-cut-*")
	if err != nil {
		closeFn()
		return c.res, fmt.Errorf("cut: %s: a temporary copy: %w", c.in.Name, err)
	}
	removed := os.Remove(tmp.Name()) == nil
	defer func() {
		tmp.Close()
		if !removed {
			os.Remove(tmp.Name())
		}
	}()
	n, err := io.Copy(tmp, r)
	closeFn()
	if err != nil {
		return c.res, err
	}
	read := c.res.BytesRead
	res, err := CutPerfDataPTReaderAt(ctx, tmp, n, spec, w)
	if res != nil {
		res.BytesRead = read
	}
	return res, c.named(err)
}

// named is err of CutPerfDataPT, which knows no name, naming the input:
// a *WindowError by its Input.
func (c *cutter) named(err error) error {
	if err == nil {
		return nil
	}
	if we := (*WindowError)(nil); errors.As(err, &we) && we.Input == "" {
		return &WindowError{Input: c.in.Name, Err: we.Err}
	}
	return fmt.Errorf("%s: %w", c.in.Name, err)
}

type cutter struct {
	in    Input
	res   *Result
	warn  func(string)
	drops map[int]uint64 // last drops of each interface's statistics in the window
}

// countingReader counts the bytes read into the result.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

// headMax bounds the head of an input a Cut keeps (headCache).
const headMax = 1 << 20

// headCache is the input of one Cut: the bytes of its first headMax that
// the passes read (the format's sniff, the clock's first records, the
// cut from the start) are read from the input once and kept; every byte
// read from the input is counted in *n (Result.BytesRead). A pass that
// reads past the head (a mark: window whose marker comes late) reads
// those bytes again, and they are counted again.
type headCache struct {
	ra   io.ReaderAt
	size int64
	n    *int64
	head []byte
	err  error // what ended the head short of headMax (io.EOF, a read error)
}

func (h *headCache) ReadAt(p []byte, off int64) (int, error) {
	if end := min(off+int64(len(p)), headMax); off <= int64(len(h.head)) && end > int64(len(h.head)) && h.err == nil {
		h.grow(end)
	}
	if off < int64(len(h.head)) {
		n := copy(p, h.head[off:])
		if n == len(p) {
			return n, nil
		}
		if h.err != nil {
			return n, h.err
		}
		m, err := h.ra.ReadAt(p[n:], off+int64(n))
		*h.n += int64(m)
		return n + m, err
	}
	if h.err != nil && off == int64(len(h.head)) {
		return 0, h.err
	}
	m, err := h.ra.ReadAt(p, off)
	*h.n += int64(m)
	return m, err
}

// grow reads the head up to end.
func (h *headCache) grow(end int64) {
	from := int64(len(h.head))
	if h.head == nil {
		h.head = make([]byte, 0, min(headMax, max(h.size, end)))
	}
	h.head = slices.Grow(h.head, int(end-from))[:end]
	m, err := h.ra.ReadAt(h.head[from:end], from)
	*h.n += int64(m)
	h.head = h.head[:from+int64(m)]
	if err != nil {
		h.err = err
	}
}

// open returns the input from off to end (-1: the end).
func (c *cutter) open(off, end int64) (io.Reader, func(), error) {
	if c.in.ReaderAt != nil {
		if end < 0 || end > c.in.Size {
			end = c.in.Size
		}
		r := io.NewSectionReader(c.in.ReaderAt, off, end-off)
		if _, ok := c.in.ReaderAt.(*headCache); ok {
			return r, func() {}, nil // it counts what it reads
		}
		return countingReader{r, &c.res.BytesRead}, func() {}, nil
	}
	if c.in.Open == nil {
		return nil, nil, errors.New("cut: input has neither ReaderAt nor Open")
	}
	rc, err := c.in.Open()
	if err != nil {
		return nil, nil, err
	}
	var r io.Reader = countingReader{rc, &c.res.BytesRead}
	if off > 0 {
		if _, err := io.CopyN(io.Discard, r, off); err != nil {
			rc.Close()
			return nil, nil, err
		}
	}
	if end >= 0 {
		r = io.LimitReader(r, end-off)
	}
	return r, func() { rc.Close() }, nil
}

func (c *cutter) sniff() (Format, error) {
	r, closeFn, err := c.open(0, 64<<10)
	if err != nil {
		return FormatUnknown, err
	}
	defer closeFn()
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(r, head)
	complete := err == io.EOF || err == io.ErrUnexpectedEOF
	if err != nil && !complete {
		return FormatUnknown, err
	}
	if c.in.ReaderAt != nil {
		complete = int64(n) == c.in.Size
	}
	return Sniff(head[:n], complete)
}

// clock finds what resolving the window needs: the first timed record
// and, for mark:NAME, the markers (from the index, else by reading the
// input from its start until they are found).
func (c *cutter) clock(ctx context.Context, f Format, ix *Index, spec timerange.Spec) (timerange.Clock, error) {
	clock := timerange.Clock{HasWall: f.hasWall()}
	marks := spec.Marks()
	if ix != nil && (len(marks) == 0 || ix.MarkersComplete) {
		clock.Start, clock.HasStart = ix.First, ix.First != NoTime
		clock.Marker = ix.Marker
		c.res.Start, c.res.HasStart = clock.Start, clock.HasStart
		return clock, nil
	}
	r, closeFn, err := c.open(0, -1)
	if err != nil {
		return clock, err
	}
	defer closeFn()
	sc := newScanner(f)
	sc.reset(r, 0, NoTime)
	var u unit
	var names []string
	var times []int64
	exact := make(map[string]bool)
	for n := 0; ; n++ {
		if n&4095 == 0 && ctx.Err() != nil {
			return clock, ctx.Err()
		}
		_, err := sc.next(&u)
		if err == io.EOF || errors.Is(err, ErrTruncated) {
			break
		}
		if err != nil {
			return clock, err
		}
		if u.timed && !clock.HasStart {
			clock.Start, clock.HasStart = u.t, true
		}
		if u.mark != nil && len(marks) > 0 {
			eff := u.t
			if !u.timed {
				continue
			}
			names = append(names, string(u.mark))
			times = append(times, eff)
			for _, m := range marks {
				if string(u.mark) == m {
					exact[m] = true
				}
			}
		}
		if clock.HasStart && len(exact) == len(marks) {
			break
		}
	}
	clock.Marker = func(name string) (int64, bool) {
		if i := timerange.MatchMarker(names, name); i >= 0 {
			return times[i], true
		}
		return 0, false
	}
	c.res.Start, c.res.HasStart = clock.Start, clock.HasStart
	return clock, nil
}

// run cuts the records of r (starting at offset off, last being the time
// of the last timed record before it) into w. stop, when set, is the
// offset where reading ends.
func (c *cutter) run(ctx context.Context, sc scanner, r io.Reader, off, last int64, win timerange.Window, w *bufio.Writer) error {
	sc.reset(r, off, last)
	st, _ := sc.(statser)
	var u unit
	for n := 0; ; n++ {
		if n&4095 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		at := sc.offset()
		raw, err := sc.next(&u)
		if err == io.EOF || errors.Is(err, ErrTruncated) {
			c.res.End, c.res.HasEnd = last, last != NoTime
		}
		if err == io.EOF {
			return nil
		}
		if errors.Is(err, ErrTruncated) {
			return c.truncated(err, last, win)
		}
		if err != nil {
			return err
		}
		if u.cut && last != NoTime && !win.Contains(last) {
			// a text line the input ends inside, at a time outside the
			// window: left out, as a binary record cut short is
			// (truncated), its loss said by the readers of the cut
			c.res.End, c.res.HasEnd = last, true
			c.res.TruncatedAt, c.res.Truncated = at, int64(len(raw))
			c.warn(fmt.Sprintf("%s: the input ends inside a record (a line cut short at offset %d, outside the window): the records before it are cut, it counts as 1 lost event", c.in.Name, at))
			continue
		}
		c.res.Records++
		if u.timed {
			last = u.t
		}
		eff := last
		if err := c.keep(&u, raw, eff, win, w, st); err != nil {
			return err
		}
	}
}

// truncated notes the half record the input ends with (err, a truncated
// *FormatError), last being the time of the last timed record before it.
func (c *cutter) truncated(err error, last int64, win timerange.Window) error {
	var fe *FormatError
	if !errors.As(err, &fe) {
		return err
	}
	c.res.TruncatedAt = fe.Offset
	if c.in.ReaderAt != nil {
		c.res.Truncated = c.in.Size - fe.Offset
	} else {
		c.res.Truncated = 1 // a compressed input: the size is not known here
	}
	if win.Contains(last) || last == NoTime {
		// No timed record before it (a capture killed inside its first
		// records): its time is not known, its loss is said.
		c.res.Lost++
		c.res.HalfLost = true
	}
	c.warn(fmt.Sprintf("%s: the input ends inside a record (%v): the records before it are cut, it counts as 1 lost event", c.in.Name, err))
	return nil
}

func (c *cutter) keep(u *unit, raw []byte, eff int64, win timerange.Window, w *bufio.Writer, st statser) error {
	before := win.HasFrom && eff < win.From
	after := win.HasTo && eff >= win.To
	switch u.kind {
	case kindHeader:
		if after {
			return nil
		}
	case kindEvent:
		if before || after {
			return nil
		}
		c.res.Events++
		c.res.Lost += u.lost
		if u.cut {
			c.res.HalfLost, c.res.HalfKept = true, true
		}
	case kindStats:
		if st == nil {
			return nil
		}
		if before {
			st.baseline(raw)
			return nil
		}
		if after {
			return nil
		}
		var key int
		var drops uint64
		raw, key, drops = st.relative(raw)
		// The counters are cumulative: the window's drops are the last
		// block's of each interface.
		if c.drops == nil {
			c.drops = map[int]uint64{}
		}
		if prev := c.drops[key]; drops > prev {
			c.res.Lost += drops - prev
		}
		c.drops[key] = drops
	}
	c.res.Kept++
	_, err := w.Write(raw)
	return err
}

// cutIndexed seeks with the index: the headers before the start
// checkpoint come from the index's list, then the input is read from the
// checkpoint before the window to the first checkpoint after it. With a
// partial index (of an input still written when it was made), the records
// after the indexed part are read too.
func (c *cutter) cutIndexed(ctx context.Context, f Format, ix *Index, win timerange.Window, w *bufio.Writer) error {
	c.res.Indexed = true
	start, stop := ix.span(win)
	sc := newScanner(f)
	st, _ := sc.(statser)
	// The headers (and statistics baselines) before the start, and for
	// a partial index those between the stop and the indexed end (the
	// scanner's state for the records after it: pcapng interfaces), all
	// checked against the index before anything is written.
	type pre struct {
		u   unit
		raw []byte
		eff int64
	}
	var pres, mids []pre
	last := int64(NoTime)
	tail := ix.Partial && stop != nil && c.in.Size > ix.Size
	for _, m := range ix.Metas {
		mid := tail && m.Off >= stop.Off
		if m.Off >= start.Off && !mid {
			continue
		}
		r, closeFn, err := c.open(m.Off, m.Off+int64(m.Len))
		if err != nil {
			return err
		}
		var u unit
		msc := sc
		if mid {
			// checked now, given to the scanner after the records before it
			msc = newScanner(f)
		}
		msc.reset(r, m.Off, last)
		raw, err := msc.next(&u)
		closeFn()
		if err != nil {
			return fmt.Errorf("%w: header at offset %d: %v", errStaleCheckpoint, m.Off, err)
		}
		if len(raw) != int(m.Len) || crc(raw) != m.CRC {
			return fmt.Errorf("%w: header at offset %d differs", errStaleCheckpoint, m.Off)
		}
		if mid {
			mids = append(mids, pre{raw: bytes.Clone(raw)})
			continue
		}
		if u.timed {
			last = u.t
		}
		if u.kind == kindStats {
			// Before the window (the start checkpoint is after it): the
			// baseline of the counters.
			if st != nil {
				st.baseline(raw)
			}
			continue
		}
		pres = append(pres, pre{u, bytes.Clone(raw), last})
	}
	if err := c.verifyCheckpoint(start, ix.Size); err != nil {
		return err
	}
	end := int64(-1)
	if stop != nil {
		end = stop.Off
		if err := c.verifyCheckpoint(*stop, ix.Size); err != nil {
			return err
		}
	}
	// The scanner saw the headers in order (pcapng interfaces); the
	// statistics baselines are noted by keep.
	for i := range pres {
		if err := c.keep(&pres[i].u, pres[i].raw, pres[i].eff, win, w, st); err != nil {
			return err
		}
	}
	r, closeFn, err := c.open(start.Off, end)
	if err != nil {
		return err
	}
	err = c.run(ctx, sc, r, start.Off, start.Last, win, w)
	closeFn()
	if end >= 0 && !tail {
		c.res.HasEnd = false // read up to the stop, not to the end
	}
	if err != nil || !tail {
		return err
	}
	// The part after the indexed end, after the headers before it.
	for i := range mids {
		sc.reset(bytes.NewReader(mids[i].raw), 0, NoTime)
		var u unit
		if _, err := sc.next(&u); err != nil {
			return err
		}
		// after the stop checkpoint: the records before it are at or
		// after its SuffixMin
		eff := stop.SuffixMin
		if u.timed {
			eff = u.t
		}
		if err := c.keep(&u, mids[i].raw, eff, win, w, st); err != nil {
			return err
		}
	}
	if r, closeFn, err = c.open(ix.Size, -1); err != nil {
		return err
	}
	defer closeFn()
	return c.run(ctx, sc, r, ix.Size, ix.Last, win, w)
}

// verifyCheckpoint checks that the bytes at a checkpoint are those indexed
// (the 4 KiB at it, fewer before the indexed end).
func (c *cutter) verifyCheckpoint(cp Checkpoint, indexed int64) error {
	n := int64(hashLen)
	if cp.Off+n > indexed {
		n = indexed - cp.Off
	}
	if n <= 0 {
		return nil
	}
	b := make([]byte, n)
	k, err := c.in.ReaderAt.ReadAt(b, cp.Off)
	c.res.BytesRead += int64(k)
	if err != nil && !(err == io.EOF && int64(k) == n) {
		return err
	}
	if crc(b) != cp.CRC {
		return fmt.Errorf("%w (bytes at offset %d)", errStaleCheckpoint, cp.Off)
	}
	return nil
}

// CheckIndex says whether in.Index can be used with in (nil) or why it is
// ignored (stale, of another format or file); Cut makes the same checks
// before seeking, and more at the checkpoints it reads.
func CheckIndex(in Input) error {
	if in.Index == nil {
		return errors.New("no index")
	}
	c := &cutter{in: in, res: &Result{}}
	f, err := c.sniff()
	if err != nil {
		return err
	}
	return in.Index.matches(in, f)
}

// Markers returns the markers of an input in file order with their times
// on the trace's clock: from its index when it has a complete one, else by
// reading it.
func Markers(ctx context.Context, in Input) ([]Marker, error) {
	c := &cutter{in: in, res: &Result{}}
	f, err := c.sniff()
	if err != nil {
		return nil, err
	}
	if f == FormatPT {
		return nil, nil // no markers
	}
	if ix := in.Index; ix != nil && ix.MarkersComplete && ix.matches(in, f) == nil {
		return ix.Markers, nil
	}
	r, closeFn, err := c.open(0, -1)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	sc := newScanner(f)
	sc.reset(r, 0, NoTime)
	var ms []Marker
	var u unit
	for n := 0; ; n++ {
		if n&4095 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if _, err := sc.next(&u); err == io.EOF || errors.Is(err, ErrTruncated) {
			return ms, nil
		} else if err != nil {
			return ms, err
		}
		if u.mark != nil && u.timed {
			ms = append(ms, Marker{Time: u.t, Text: string(u.mark)})
		}
	}
}

// Clock returns what resolving spec on the input needs (timerange.Clock):
// its first timed record and, for mark:NAME, its markers (from the index
// when it has a complete one, else read until found).
func Clock(ctx context.Context, in Input, spec timerange.Spec) (timerange.Clock, error) {
	c := &cutter{in: in, res: &Result{}, warn: func(string) {}}
	f, err := c.sniff()
	if err != nil {
		return timerange.Clock{}, err
	}
	if f == FormatPT {
		if len(spec.Marks()) > 0 {
			return timerange.Clock{}, &WindowError{Input: in.Name, Err: errPTNoMarkers}
		}
		r, closeFn, err := c.open(0, -1)
		if err != nil {
			return timerange.Clock{}, err
		}
		defer closeFn()
		sp, err := scanPT(ctx, r, in.PT, timerange.Window{}, true)
		return timerange.Clock{Start: sp.first, HasStart: sp.hasFirst}, err
	}
	ix := in.Index
	if ix != nil && ix.matches(in, f) != nil {
		ix = nil
	}
	return c.clock(ctx, f, ix, spec)
}
