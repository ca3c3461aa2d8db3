package usb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/iotap/iotap/internal/mapfile"
	"github.com/iotap/iotap/internal/ndjson"
	"github.com/iotap/iotap/usbmon"
)

// ReadOptions are how a capture is read by 'iotap usb read', 'stats' and
// 'pair': the events selected, where device identities come from, bad
// text lines, decoding ahead on a goroutine, -c.
type ReadOptions struct {
	// Selection selects the events handed on; AnySelection() selects
	// all (the zero Selection means bus, device and endpoint 0).
	Selection Selection
	// Sysfs is a sysfs directory (/sys/bus/usb/devices) to learn the
	// identities of devices not enumerated in the capture from ("": none).
	Sysfs string
	// KeepGoing skips text lines that do not parse, calling OnSkip with
	// each one's error (usbmon.ReaderOptions).
	KeepGoing bool
	OnSkip    func(error)
	// Workers is usbmon.UsePrefetch's: 2 decodes a pcap or pcapng file on
	// a goroutine of its own; 0 decides by the size of the input;
	// negative: an *ArgError of Prepare.
	Workers int
	// Limit, when not 0, stops after Limit events handed on (Pipeline.Limit).
	Limit uint64
}

// ErrSelection matches the errors of a Selection that cannot be applied:
// a bad flag value, a time window the capture cannot resolve. They are the
// user's mistake, not the input's.
var ErrSelection = errors.New("usb: the selection cannot be applied")

// selectionError is an error matching ErrSelection, worded as err.
type selectionError struct{ err error }

func (e *selectionError) Error() string        { return e.err.Error() }
func (e *selectionError) Unwrap() error        { return e.err }
func (e *selectionError) Is(target error) bool { return target == ErrSelection }

// Prepared is a pipeline's set-up before its input is opened: the
// identities (with ReadOptions.Sysfs) and the Selection's filter, so that
// their errors come before any input is read.
type Prepared struct {
	opt    ReadOptions
	ids    *Identities
	filter Filter
	window *WindowFilter
}

// Prepare checks opt and builds what does not depend on the input. Errors
// of the Selection match ErrSelection; a field out of range is an
// *ArgError.
func Prepare(opt ReadOptions) (*Prepared, error) {
	if opt.Workers < 0 {
		return nil, &ArgError{Field: "ReadOptions.Workers", Value: opt.Workers, Want: "0 (chosen by the size of the input) or more"}
	}
	ids := NewIdentities()
	if opt.Sysfs != "" {
		if err := ids.AddSysfs(opt.Sysfs); err != nil {
			return nil, err
		}
	}
	f, wf, err := opt.Selection.Filter(ids)
	if err != nil {
		return nil, &selectionError{err}
	}
	return &Prepared{opt: opt, ids: ids, filter: f, window: wf}, nil
}

// Open returns the pipeline reading the capture src (pcap, pcapng, binary
// or text usbmon, compressed too; name is the input in messages). size is
// src's size in bytes (-1: unknown); live says that src is a pipe or FIFO
// (a capture piped in): it is then never read ahead, and the writers of
// the Pipeline pass each event on at once. Close the pipeline when done.
// Prepare and Open make one pipeline only.
func (p *Prepared) Open(src io.Reader, name string, size int64, live bool) (*Pipeline, error) {
	r, _, err := usbmon.NewReaderOptions(src, usbmon.ReaderOptions{KeepGoing: p.opt.KeepGoing, OnSkip: p.opt.OnSkip})
	if err != nil {
		return nil, mapfile.Named(name, err)
	}
	if f := r.Format(); (f == usbmon.Format1u || f == usbmon.Format1t) && p.opt.Selection.WallClock() {
		return nil, &selectionError{fmt.Errorf("%s is a usbmon text capture: its timestamps are not wall-clock times; give --from/--to in seconds from the first event", name)}
	}
	var pf *usbmon.PrefetchReader
	if !live && usbmon.UsePrefetch(r, size, p.opt.Workers) {
		pf = usbmon.Prefetch(r)
		r = pf
	}
	pl := NewPipeline(r, p.filter, p.ids)
	pl.Limit, pl.Live, pl.Name, pl.window, pl.prefetch = p.opt.Limit, live, name, p.window, pf
	return pl, nil
}

// OpenPipeline is Prepare and Open: the pipeline of opt over the capture
// src.
func OpenPipeline(src io.Reader, name string, size int64, live bool, opt ReadOptions) (*Pipeline, error) {
	p, err := Prepare(opt)
	if err != nil {
		return nil, err
	}
	return p.Open(src, name, size, live)
}

// Close stops the goroutine decoding ahead (ReadOptions.Workers), if any.
// It does not close the input.
func (pl *Pipeline) Close() {
	if pl.prefetch != nil {
		pl.prefetch.Close()
	}
}

// WriteText writes the lines of 'iotap usb read' (AppendEventText) for the
// events the pipeline hands on; with hex each event's data follows as a
// dump (AppendHexDump). It returns the read error or w's; a live pipeline
// writes each line through at once.
func (pl *Pipeline) WriteText(ctx context.Context, w io.Writer, hex bool) error {
	// The lines are appended to the writer's buffer itself (no line
	// buffer copied into a bufio.Writer).
	nw := ndjson.NewWriter(w)
	nw.Live = pl.Live
	readErr := pl.writeLines(ctx, nw, hex, nil)
	if err := nw.Flush(); err != nil && readErr == nil {
		readErr = err
	}
	return readErr
}

// writeLines is the loop of WriteText and, with enc, WriteNDJSON:
// Pipeline.each's, with the line or record of each event handed on
// appended in place of the call to a function (a tenth of the
// instructions of 'iotap usb read'). It returns the read error or nw's.
func (pl *Pipeline) writeLines(ctx context.Context, nw *ndjson.Writer, hex bool, enc *EventEncoder) error {
	dec := NewDecoder(pl.Identities)
	var lw lineWriter
	var ev usbmon.Event
	var p Pair
	limit := pl.Limit
	if limit == 0 {
		limit-- // no limit: handed never reaches it
	}
	var handed uint64
	for n := uint64(0); ; n++ {
		if handed >= limit {
			return nil
		}
		if n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := pl.Reader.ReadInto(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return pl.readError(err)
		}
		if !pl.Started {
			pl.First, pl.Started = Micros(&ev), true
		}
		ok := pl.Pairer.addInto(&ev, &p)
		if ev.Synthesized || ok && ev.Transfer == usbmon.Control {
			pl.Identities.Learn(&ev, p, ok)
		}
		if pl.Filter != nil && !pl.Filter(&ev) {
			continue
		}
		handed++
		switch {
		case enc != nil:
			var d Decoded
			if !dec.quiet(&ev) {
				d = dec.decode(&ev, &p, ok)
			}
			nw.B = enc.append(nw.B, n+1, &ev, &p, ok, &d)
		case !hex && dec.quiet(&ev):
			// The usual line: nothing decoded, no dump; the others
			// are appendText's, out of the loop.
			nw.B = lw.append(nw.B, n+1, Elapsed(pl.First, Micros(&ev), &ev), &ev, p.Latency, ok)
		default:
			nw.B = pl.appendText(nw.B, dec, &lw, n+1, &ev, &p, ok, hex)
		}
		if len(nw.B) >= 1<<16 || nw.Live {
			if err := nw.Flush(); err != nil {
				return err
			}
		}
	}
}

// appendText appends writeLines' text line of ev, numbered seq, for
// any event: with its decoding, and with hex its data as a dump.
func (pl *Pipeline) appendText(b []byte, dec *Decoder, lw *lineWriter, seq uint64, ev *usbmon.Event, p *Pair, ok, hex bool) []byte {
	var d Decoded
	if !dec.quiet(ev) {
		d = dec.decode(ev, p, ok)
	}
	if rel := Elapsed(pl.First, Micros(ev), ev); d.Summary == "" {
		b = lw.append(b, seq, rel, ev, p.Latency, ok)
	} else {
		b = appendEventText(b, seq, rel, ev, p.Latency, ok, &d)
	}
	if hex && ev.HasData() {
		b = AppendHexDump(b, ev.Data)
	}
	return b
}

// WriteNDJSON writes 'iotap usb read --json': the "input" record naming
// file, then a "usb_event" record (EventEncoder) per event handed on
// (docs/ndjson.md). It returns the read error or w's.
func (pl *Pipeline) WriteNDJSON(ctx context.Context, w io.Writer, file string) error {
	nw := ndjson.NewWriter(w)
	nw.Live = pl.Live
	nw.B = AppendInput(nw.B, file, pl.Reader.Format())
	readErr := pl.writeLines(ctx, nw, false, &EventEncoder{Identities: pl.Identities})
	if err := nw.Flush(); err != nil && readErr == nil {
		readErr = err
	}
	return readErr
}

// TransferFormat is the output of WriteTransfers.
type TransferFormat struct {
	// JSON writes NDJSON: the "input" record naming File, "usb_pair" and
	// "usb_unmatched" records and a final "usb_pair_summary"; else the
	// text lines of AppendPairText and AppendUnmatchedText.
	JSON bool
	File string
	// Unmatched also lists the submissions that never completed
	// (EachTransfer).
	Unmatched bool
}

// WriteTransfers writes the lines of 'iotap usb pair': one per transfer
// (EachTransfer). The JSON summary is written when the input was read to
// its end (also a truncated one). It returns the read error or w's; the
// counts are pl.Pairer.Counts() (PairCounts.Summary in words).
func (pl *Pipeline) WriteTransfers(ctx context.Context, w io.Writer, f TransferFormat) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	if f.JSON {
		if _, err := bw.Write(AppendInput(nil, f.File, pl.Reader.Format())); err != nil {
			return err
		}
	}
	readErr := pl.EachTransfer(ctx, f.Unmatched, func(t *Transfer) error {
		switch {
		case t.Unmatched != "" && f.JSON:
			line = AppendUnmatched(line[:0], t.Unmatched, t.Key, t.Submission, pl.Identities)
		case t.Unmatched != "":
			line = AppendUnmatchedText(line[:0], t.Unmatched, t.Key, t.Submission, pl.Identities)
		case f.JSON:
			line = AppendPair(line[:0], t.Pair, t.Event, pl.Identities)
		default:
			line = AppendPairText(line[:0], t.Pair, t.Event, pl.Identities)
		}
		_, err := bw.Write(line)
		return err
	})
	if f.JSON && (readErr == nil || errors.Is(readErr, usbmon.ErrTruncated)) {
		if _, err := bw.Write(AppendPairSummary(line[:0], pl.Pairer.Counts())); err != nil && readErr == nil {
			readErr = err
		}
	}
	if err := bw.Flush(); err != nil && readErr == nil {
		readErr = err
	}
	return readErr
}

// Summary says c in words, as 'iotap usb pair' ends its text output.
func (c PairCounts) Summary() string {
	return fmt.Sprintf("%d transfers paired; %d submissions unmatched (%d in flight at the end, %d superseded); %d orphan completions; %d submission errors",
		c.Pairs, c.Unmatched, c.InFlight, c.Superseded, c.Orphans, c.SubmitErrors)
}

// Stats runs the pipeline and counts the events it hands on (Stats.Record).
// The Stats are returned with the read error (a truncated input still
// has its counts).
func (pl *Pipeline) Stats(ctx context.Context) (*Stats, error) {
	st := NewStats()
	err := pl.each(ctx, st, nil)
	return st, err
}
