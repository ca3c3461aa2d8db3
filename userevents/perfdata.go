package userevents

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/iotap/iotap/internal/mapfile"
	"github.com/iotap/iotap/perfdata"
)

// perf.data layout (tools/perf/Documentation/perf.data-file-format.txt),
// read by package perfdata.
const (
	perfFeatTracingData = 1  // HEADER_TRACING_DATA
	perfFeatClockData   = 29 // HEADER_CLOCK_DATA: the recording clock against the wall clock
	perfFeatLastKnown   = 32 // feature bits perf 6.x defines are below this

	sampleIP         = 1 << 0
	sampleTID        = 1 << 1
	sampleTime       = 1 << 2
	sampleAddr       = 1 << 3
	sampleRead       = 1 << 4
	sampleCallchain  = 1 << 5
	sampleID         = 1 << 6
	sampleCPU        = 1 << 7
	samplePeriod     = 1 << 8
	sampleStreamID   = 1 << 9
	sampleRaw        = 1 << 10
	sampleIdentifier = 1 << 16

	readTotalEnabled = 1 << 0
	readTotalRunning = 1 << 1
	readID           = 1 << 2
	readGroup        = 1 << 3
	readLost         = 1 << 4

	perfTypeTracepoint = 2
)

// PerfDataError is a malformed perf.data at byte Offset of the file.
type PerfDataError struct {
	Offset int64
	Msg    string
}

func (e *PerfDataError) Error() string {
	return fmt.Sprintf("userevents: perf.data at byte %d: %s", e.Offset, e.Msg)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *PerfDataError) Unwrap() error { return ErrInvalid }

// PerfDataStats counts what a PerfDataReader saw.
type PerfDataStats struct {
	Events uint64 // tracepoint samples decoded and returned
	// Lost is what the kernel reported lost (PERF_RECORD_LOST counts and
	// PERF_RECORD_LOST_SAMPLES).
	Lost uint64
	// NotTracepoint counts samples of other events (cycles, ...);
	// NoFormat samples whose event id has no format in the tracing data;
	// Bad samples that did not decode (each also in Errors, up to a cap).
	NotTracepoint, NoFormat, Bad uint64
	// Compressed counts PERF_RECORD_COMPRESSED records (perf record -z),
	// inflated (zstd) and read like the others.
	Compressed uint64
}

type perfAttr struct {
	typ        uint32
	config     uint64
	sampleType uint64
	readFormat uint64
	ids        []uint64
}

// PerfDataReader reads the tracepoint samples (user_events and every other
// tracepoint) of a perf.data file that perf record wrote, file or pipe
// mode, compressed (perf record -z) or not, and decodes each with the
// event's format stored in the file's tracing data: the same records,
// with the same names and values, as the recorders of this package
// return. Samples are returned in file order (perf writes them in rounds,
// per CPU; sort by TS for time order). The file is read by package
// perfdata.
type PerfDataReader struct {
	rd      *perfdata.Reader
	pipe    bool
	attrs   []perfAttr
	byID    map[uint64]int
	idPos   int // byte offset of the sample id from the start of the body, -1 none
	tracing *TracingData
	stats   PerfDataStats
	// Warnings are conditions that do not stop reading: unknown feature
	// sections, formats that did not parse.
	Warnings []string
	// Errors holds the first errors of samples that did not decode.
	Errors []error

	vals []Value

	// clockOffset is wall-clock ns minus recording-clock ns (CLOCK_DATA).
	clockOffset int64
	clockOK     bool
	file        io.Closer // OpenPerfData's file, closed by Close
}

// maxPerfErrors caps PerfDataReader.Errors.
const maxPerfErrors = 32

// maxPerfAttrs bounds the attributes read from a file.
const maxPerfAttrs = 1 << 12

// NewPerfDataReader opens a perf.data read from r; size is its length in
// bytes, or -1 for a stream (pipe mode only: file mode needs the tracing
// data stored after the samples, so r must then be an io.ReaderAt).
func NewPerfDataReader(r io.Reader, size int64) (*PerfDataReader, error) {
	var f *perfdata.File
	var err error
	if ra, ok := r.(io.ReaderAt); ok && size >= 0 {
		f, err = perfdata.Open(ra, size)
	} else {
		f, err = perfdata.OpenStream(r)
	}
	if err != nil {
		return nil, fromPerfdata(err)
	}
	p := &PerfDataReader{byID: map[uint64]int{}, idPos: -1, pipe: f.Pipe}
	if !f.Pipe {
		if f.Truncated != "" {
			// perf record killed before it rewrote the header: no feature
			// sections, so no tracing data.
			return nil, &PerfDataError{48, f.Truncated + ": no tracing data to decode the samples with"}
		}
		for _, a := range f.Attrs {
			p.addAttr(perfAttr{typ: a.Type, config: a.Config, sampleType: a.SampleType, readFormat: a.ReadFormat, ids: a.IDs})
		}
		p.Warnings = append(p.Warnings, f.Warnings...)
		for bit := 1; bit < 256; bit++ {
			if !f.HasFeature(bit) {
				continue
			}
			sec, ok := f.Sections[bit]
			switch {
			case bit >= perfFeatLastKnown:
				if ok {
					p.Warnings = append(p.Warnings, fmt.Sprintf("unknown feature section %d (%d bytes at %#x) skipped", bit, sec.Size, sec.Offset))
				} else {
					p.Warnings = append(p.Warnings, fmt.Sprintf("unknown feature section %d skipped", bit))
				}
			case bit == perfFeatClockData:
				if !ok || sec.Size < 24 || sec.Size > 1<<12 {
					p.Warnings = append(p.Warnings, fmt.Sprintf("clock data section %#x+%#x unusable: wall-clock time unknown", sec.Offset, sec.Size))
					break
				}
				b, _, err := f.Section(bit)
				if err != nil {
					return nil, fromPerfdata(err)
				}
				p.setClockData(b)
			case bit == perfFeatTracingData:
				if !ok || sec.Size > 1<<30 {
					return nil, &PerfDataError{sec.Offset, fmt.Sprintf("tracing data section %#x+%#x outside the file", sec.Offset, sec.Size)}
				}
				b, _, err := f.Section(bit)
				if err != nil {
					return nil, fromPerfdata(err)
				}
				if err := p.setTracing(b, sec.Offset); err != nil {
					return nil, err
				}
			}
		}
		if p.tracing == nil {
			p.Warnings = append(p.Warnings, "no tracing data (perf record -e of no tracepoint?): no sample can be decoded")
		}
	}
	p.rd = f.Records()
	return p, nil
}

// fromPerfdata makes a perfdata error a *PerfDataError.
func fromPerfdata(err error) error {
	var pe *perfdata.Error
	if errors.As(err, &pe) {
		return &PerfDataError{pe.Offset, pe.Msg}
	}
	return &PerfDataError{0, err.Error()}
}

// setClockData reads a HEADER_CLOCK_DATA feature: u32 version, u32
// clockid, u64 wall-clock ns and u64 recording-clock ns taken at the same
// moment by perf record.
func (p *PerfDataReader) setClockData(b []byte) {
	if len(b) < 24 || binary.LittleEndian.Uint32(b) < 1 {
		p.Warnings = append(p.Warnings, "clock data of an unknown version: wall-clock time unknown")
		return
	}
	wall, clk := binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[16:])
	p.clockOffset, p.clockOK = int64(wall-clk), true
}

// WallClock returns what to add to a sample's TS (the recording clock) to
// get wall-clock nanoseconds since the Unix epoch, from the clock data
// perf record stores (perf 5.11 and later); ok is false without it.
func (p *PerfDataReader) WallClock() (offset int64, ok bool) { return p.clockOffset, p.clockOK }

func (p *PerfDataReader) addAttr(a perfAttr) {
	i := len(p.attrs)
	p.attrs = append(p.attrs, a)
	for _, id := range a.ids {
		p.byID[id] = i
	}
	// Where the sample id is: first with IDENTIFIER, else after IP, TID,
	// TIME and ADDR (perf requires every attribute to agree).
	st := p.attrs[0].sampleType
	switch {
	case st&sampleIdentifier != 0:
		p.idPos = 0
	case st&sampleID != 0:
		n := 0
		for _, b := range []uint64{sampleIP, sampleTID, sampleTime, sampleAddr} {
			if st&b != 0 {
				n += 8
			}
		}
		p.idPos = n
	}
}

func (p *PerfDataReader) setTracing(b []byte, at int64) error {
	td, err := ParseTracingData(b)
	if err != nil {
		var te *TracingDataError
		if errors.As(err, &te) {
			return &PerfDataError{at + int64(te.Offset), "tracing data: " + te.Msg}
		}
		return err
	}
	for _, e := range td.Bad {
		p.Warnings = append(p.Warnings, e.Error())
	}
	p.tracing = td
	return nil
}

// Tracing returns the file's tracing data (nil before it was read: in
// pipe mode it comes as a record before the samples).
func (p *PerfDataReader) Tracing() *TracingData { return p.tracing }

// Stats returns the counts so far.
func (p *PerfDataReader) Stats() PerfDataStats { return p.stats }

// Read returns the next tracepoint sample, decoded, or io.EOF after the
// last. rec's Values and byte fields point into the reader's buffer: they
// are valid until the next call. A sample that does not decode is counted
// (Stats.Bad, Errors) and skipped; a record structure that is broken ends
// reading with a *PerfDataError (what was read stays valid).
func (p *PerfDataReader) Read(rec *Recorded) error {
	err := p.read(rec)
	if err != nil {
		p.rd.Close() // the decoder's goroutine ends with reading
	}
	return err
}

func (p *PerfDataReader) read(rec *Recorded) error {
	for {
		r, err := p.rd.Next()
		p.stats.Compressed = p.rd.Compressed()
		if err == io.EOF {
			return io.EOF
		}
		if err != nil {
			return fromPerfdata(err)
		}
		typ, body, at := r.Type, r.Data[perfdata.RecordHeaderSize:], r.Offset
		switch typ {
		case PerfRecordSample:
			ok, err := p.sample(body, at, rec)
			if err != nil {
				p.bad(err)
				continue
			}
			if ok {
				p.stats.Events++
				return nil
			}
		case PerfRecordLost:
			if len(body) >= 16 {
				p.stats.Lost += binary.LittleEndian.Uint64(body[8:])
			}
		case PerfRecordLostSamples:
			if len(body) >= 8 {
				p.stats.Lost += binary.LittleEndian.Uint64(body)
			}
		case perfdata.RecordHeaderFeature:
			// u64 feature id, then the feature section (pipe mode).
			if len(body) >= 8 && binary.LittleEndian.Uint64(body) == perfFeatClockData {
				p.setClockData(body[8:])
			}
		case perfdata.RecordHeaderAttr:
			if !p.pipe || len(body) < 48 {
				continue
			}
			a, err := perfdata.HeaderAttr(r.Data, at)
			if err != nil {
				return fromPerfdata(err)
			}
			if len(p.attrs) < maxPerfAttrs {
				p.addAttr(perfAttr{typ: a.Type, config: a.Config, sampleType: a.SampleType, readFormat: a.ReadFormat, ids: a.IDs})
			}
		case perfdata.RecordHeaderTracingData:
			// u32 size, then the blob after the record, padded to 8.
			if !p.pipe || len(body) < 4 || r.Inflated {
				continue
			}
			n := int64(binary.LittleEndian.Uint32(body))
			if n > 1<<30 {
				return &PerfDataError{at + 8, fmt.Sprintf("tracing data of %d bytes", n)}
			}
			from := r.PayloadOffset
			b, err := p.rd.Payload()
			if err != nil {
				return fromPerfdata(err)
			}
			if err := p.setTracing(b[:n], from); err != nil {
				return err
			}
		}
	}
}

// Close ends the decoder of compressed records (perf record -z) when
// reading stops before io.EOF or an error; it does not close the
// underlying reader. Reading after Close returns an error.
func (p *PerfDataReader) Close() error {
	err := p.rd.Close()
	if p.file != nil {
		if cerr := p.file.Close(); err == nil {
			err = cerr
		}
		p.file = nil
	}
	return err
}

// OpenPerfData opens the perf.data file path as 'iotap events read' does:
// "-" is standard input, read as a stream (pipe mode only), as is a file
// that is not regular (a named pipe). Close closes the file too. Errors
// name the file ("FILE: userevents: perf.data at byte N: ...").
func OpenPerfData(path string) (*PerfDataReader, error) {
	if path == "-" {
		r, err := NewPerfDataReader(os.Stdin, -1)
		if err != nil {
			return nil, fmt.Errorf("-: %w", err)
		}
		return r, nil
	}
	f, st, err := mapfile.OpenStat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory (give a perf.data file)", path)
	}
	size := st.Size()
	if !st.Mode().IsRegular() {
		size = -1
	}
	r, err := NewPerfDataReader(f, size)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.file = f
	return r, nil
}

// String says what the reader saw as 'iotap events read' reports it.
func (s PerfDataStats) String() string {
	return fmt.Sprintf("%d event(s), lost %d, undecodable %d, without format %d, other samples %d",
		s.Events, s.Lost, s.Bad, s.NoFormat, s.NotTracepoint)
}

func (p *PerfDataReader) bad(err error) {
	p.stats.Bad++
	if len(p.Errors) < maxPerfErrors {
		p.Errors = append(p.Errors, err)
	}
}

// sample decodes a PERF_RECORD_SAMPLE body (at: the record's offset); ok
// false means a sample that is not a decodable tracepoint (counted).
func (p *PerfDataReader) sample(body []byte, at int64, rec *Recorded) (bool, error) {
	if len(p.attrs) == 0 {
		return false, &PerfDataError{at, "sample before any event attribute"}
	}
	a := &p.attrs[0]
	if len(p.attrs) > 1 {
		if p.idPos < 0 || p.idPos+8 > len(body) {
			return false, &PerfDataError{at, "sample without an id, and several events recorded"}
		}
		i, ok := p.byID[binary.LittleEndian.Uint64(body[p.idPos:])]
		if !ok {
			return false, &PerfDataError{at + 8 + int64(p.idPos), "sample id of no recorded event"}
		}
		a = &p.attrs[i]
	}
	if a.typ != perfTypeTracepoint || a.sampleType&sampleRaw == 0 {
		p.stats.NotTracepoint++
		return false, nil
	}
	le := binary.LittleEndian
	o := 0
	short := func(what string) error {
		return &PerfDataError{at + 8 + int64(o), fmt.Sprintf("sample cut short in %s (%d bytes)", what, len(body))}
	}
	skip := func(n int, what string) error {
		if n < 0 || n > len(body)-o {
			return short(what)
		}
		o += n
		return nil
	}
	*rec = Recorded{}
	st := a.sampleType
	var pid, tid uint32
	for _, f := range []struct {
		bit  uint64
		what string
	}{{sampleIdentifier, "identifier"}, {sampleIP, "ip"}, {sampleTID, "tid"}, {sampleTime, "time"}, {sampleAddr, "addr"},
		{sampleID, "id"}, {sampleStreamID, "stream id"}, {sampleCPU, "cpu"}, {samplePeriod, "period"}} {
		if st&f.bit == 0 {
			continue
		}
		if len(body)-o < 8 {
			return false, short(f.what)
		}
		switch f.bit {
		case sampleTID:
			pid, tid = le.Uint32(body[o:]), le.Uint32(body[o+4:])
			rec.HasProcess = true
		case sampleTime:
			rec.TS = le.Uint64(body[o:])
		case sampleCPU:
			rec.CPU = int(le.Uint32(body[o:]))
		}
		o += 8
	}
	if st&sampleRead != 0 {
		rf := a.readFormat
		per := 1
		if rf&readID != 0 {
			per++
		}
		if rf&readLost != 0 {
			per++
		}
		head := 0
		if rf&readTotalEnabled != 0 {
			head++
		}
		if rf&readTotalRunning != 0 {
			head++
		}
		if rf&readGroup != 0 {
			if len(body)-o < 8 {
				return false, short("read group")
			}
			nr := le.Uint64(body[o:])
			if nr > 1<<12 {
				return false, short("read group")
			}
			if err := skip(8*(1+head+per*int(nr)), "read group"); err != nil {
				return false, err
			}
		} else if err := skip(8*(head+per), "read values"); err != nil {
			return false, err
		}
	}
	if st&sampleCallchain != 0 {
		if len(body)-o < 8 {
			return false, short("callchain")
		}
		nr := le.Uint64(body[o:])
		if nr > uint64(len(body)) {
			return false, short("callchain")
		}
		if err := skip(8+8*int(nr), "callchain"); err != nil {
			return false, err
		}
	}
	if len(body)-o < 4 {
		return false, short("raw size")
	}
	n := int(le.Uint32(body[o:]))
	o += 4
	if n > len(body)-o {
		return false, short("raw data")
	}
	raw := body[o : o+n]
	c, ok := ParseCommon(raw)
	if !ok {
		return false, &PerfDataError{at + 8 + int64(o), fmt.Sprintf("raw data of %d bytes, short of the common fields", n)}
	}
	if p.tracing == nil {
		p.stats.NoFormat++
		return false, nil
	}
	f := p.tracing.Formats[int(c.Type)]
	if f == nil {
		p.stats.NoFormat++
		return false, nil
	}
	vals, err := f.Decode(raw, p.vals[:0])
	p.vals = vals
	if err != nil {
		return false, fmt.Errorf("userevents: perf.data sample at byte %d: %w", at, err)
	}
	rec.System, rec.Name, rec.PID, rec.Format, rec.Values = p.tracing.Systems[int(c.Type)], f.Name, c.PID, f, vals
	if c.PID == 0 && tid != 0 {
		rec.PID = int32(tid)
	}
	rec.Process, rec.Thread = int32(pid), int32(tid)
	eh, err := eventHeader(f, raw)
	if err != nil {
		return false, fmt.Errorf("userevents: perf.data sample at byte %d: %s: %w", at, f.Name, err)
	}
	rec.EventHeader = eh
	if p.clockOK && rec.TS != 0 {
		rec.Wall = int64(rec.TS) + p.clockOffset
	}
	return true, nil
}

// IsPerfData reports whether b starts like a perf.data file.
func IsPerfData(b []byte) bool { return perfdata.Is(b) }
