package intelpt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/iotap/iotap/internal/mapfile"
	"github.com/iotap/iotap/perfdata"
)

// A perf.data's PT streams without reading them into memory.
//
// perf record writes the AUX area of each CPU (each thread in per-thread
// mode) as PERF_RECORD_AUXTRACE records among the others: a 48-byte record
// (size, offset in the AUX area, reference, mmap index, thread, CPU) whose
// trace data follows it in the file and is not counted in its header's
// size. A stream is the concatenation of its records' data in file order,
// and a packet may continue from one record into the next of the same
// stream. perf's own reader (tools/perf/util/auxtrace.c) notes each
// record's file offset and size when it walks the file and maps the data
// only when its decoder needs it; OpenPerfDataPT does the same in two
// passes: it walks the records once for the streams, their sizes, the
// configuration and the loss, and each stream's Reader walks them again,
// reading its own records' data and skipping everything else.

// perfSource is the file a stream of OpenPerfDataPT (or RawFileStream)
// is read from.
type perfSource struct {
	f   *perfdata.File // nil: a raw trace file, the whole stream
	ra  io.ReaderAt
	key perfStreamKey
	// path names the file (for Map), "" when unknown; records counts
	// the stream's AUXTRACE records, first is the file offset of the
	// first one's data.
	path    string
	records int
	first   int64
	own     *os.File // a raw trace file, closed by PerfStream.Close
}

// OpenPerfDataPT reads the perf.data that ra holds (size bytes, file or
// pipe mode) as PerfDataPTTruncated reads it, without reading the PT
// data: the streams have Size and no Data, and each is read as it comes
// from ra by PerfStream.Reader, in constant memory. ra must stay readable
// (and unchanged) while the streams are read.
func OpenPerfDataPT(ra io.ReaderAt, size int64) (*PerfTrace, error) {
	return openPerfDataPT(ra, size, true)
}

// OpenPerfDataPTComplete is OpenPerfDataPT as PerfDataPT reads: a file
// cut short is an error.
func OpenPerfDataPTComplete(ra io.ReaderAt, size int64) (*PerfTrace, error) {
	return openPerfDataPT(ra, size, false)
}

func openPerfDataPT(ra io.ReaderAt, size int64, tolerant bool) (*PerfTrace, error) {
	head := make([]byte, perfPipeHeaderSize)
	if n, _ := ra.ReadAt(head, 0); n < len(head) || !IsPerfData(head) {
		return nil, perfErr(0, "missing PERFILE2 magic")
	}
	f, err := perfdata.Open(ra, size)
	if err != nil {
		return nil, fromPerfdata(err)
	}
	type where struct {
		records int
		first   int64
	}
	at := map[perfStreamKey]*where{}
	t, keys, err := scanPerfPT(f, tolerant, func(k perfStreamKey, from, _ int64) {
		w := at[k]
		if w == nil {
			w = &where{first: from}
			at[k] = w
		}
		w.records++
	})
	if err != nil {
		return nil, err
	}
	for i, k := range keys {
		t.Streams[i].src = &perfSource{f: f, ra: ra, key: k, records: at[k].records, first: at[k].first}
	}
	return t, nil
}

// RawFileStream is the raw trace file path as the stream of one CPU (-1
// per thread) and thread: read from the file by Reader, mapped by Map,
// never held. Close closes the file.
func RawFileStream(path string, cpu, tid int32) (PerfStream, error) {
	f, st, err := mapfile.OpenStat(path)
	if err != nil {
		return PerfStream{}, err
	}
	return PerfStream{CPU: cpu, TID: tid, Size: st.Size(),
		src: &perfSource{ra: f, path: path, records: 1, own: f}}, nil
}

// Close closes the file of a stream of RawFileStream (the file of a
// perf.data's streams is closed by PerfDataFile.Close).
func (s *PerfStream) Close() error {
	if s.src == nil || s.src.own == nil {
		return nil
	}
	return s.src.own.Close()
}

// Map gives the stream to the flow decoders (FlowListing, BlockDecoder),
// which take it as one slice, without reading it into memory where it
// can (Linux): a stream whose data is one range of its file (a raw
// trace file; a perf.data stream of one AUXTRACE record) is that range
// mapped (MapFileRange); a stream of several AUXTRACE records is copied,
// as it is read, to a temporary file in os.TempDir (removed at once: it
// lives until Close), which is mapped. The mapping's pages are dropped
// behind the decoder with DropBefore, so the resident memory stays flat
// whatever the stream's size (the copy costs the stream's size on disk
// while it is decoded). Elsewhere, and for a stream held in memory, Data
// is the stream read whole. Close releases it.
func (s *PerfStream) Map() (*MappedTrace, error) {
	if s.src == nil {
		return &MappedTrace{Data: s.Data}, nil
	}
	if s.Size == 0 {
		return &MappedTrace{Data: []byte{}}, nil
	}
	if canMap && s.src.records == 1 && s.src.path != "" {
		f, err := os.Open(s.src.path)
		if err != nil {
			return nil, err
		}
		if m := mapRange(f, uint64(s.src.first), uint64(s.Size)); m != nil {
			return m, nil
		}
		f.Close()
	}
	if m, _, err := spoolMap("the stream", s.Reader()); m != nil || err != nil {
		return m, err
	}
	b, err := io.ReadAll(s.Reader())
	if err != nil {
		return nil, err
	}
	return &MappedTrace{Data: b}, nil
}

// Len is the stream's length in bytes.
func (s *PerfStream) Len() int64 {
	if s.src != nil {
		return s.Size
	}
	return int64(len(s.Data))
}

// Reader reads the stream from its first byte: Data, or for a stream of
// OpenPerfDataPT its AUXTRACE records' data from the file, one record
// after the other. A read error names the file offset; a file that no
// longer holds what OpenPerfDataPT found (changed since) is an error
// wrapping ErrPerfData, never a silently shorter stream.
func (s *PerfStream) Reader() io.Reader {
	if s.src == nil {
		return bytes.NewReader(s.Data)
	}
	if s.src.f == nil { // a raw trace file
		return io.NewSectionReader(s.src.ra, 0, s.Size)
	}
	return &perfStreamReader{src: s.src, want: s.Size, rd: s.src.f.Records(), dataEnd: s.src.f.Data.Offset + s.src.f.Data.Size}
}

// perfStreamReader reads one stream of a perf.data file.
type perfStreamReader struct {
	src      *perfSource
	rd       *perfdata.Reader
	dataEnd  int64
	pos, end int64 // the file range of the current record's data left
	last     bool  // the current record is the last to read
	done     bool
	got      int64 // bytes read so far
	want     int64 // the stream's size
}

func (r *perfStreamReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for r.pos == r.end {
		if r.done || r.last {
			r.done = true
			if r.got != r.want {
				return 0, perfErr(int(r.rd.Offset()), "stream of cpu %d, tid %d: %d bytes found where the first reading found %d (the file changed?)", r.src.key.cpu, r.src.key.tid, r.got, r.want)
			}
			return 0, io.EOF
		}
		if err := r.nextRecord(); err != nil {
			return 0, err
		}
	}
	n := int(min(int64(len(p)), r.end-r.pos))
	m, err := r.src.ra.ReadAt(p[:n], r.pos)
	r.pos += int64(m)
	r.got += int64(m)
	if m < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return m, perfErr(int(r.pos), "AUXTRACE data: %v", err)
	}
	return m, nil
}

// nextRecord finds the next AUXTRACE record of the stream (or the end:
// done), as scanPerfPT walks the records.
func (r *perfStreamReader) nextRecord() error {
	for {
		rec, err := r.rd.Next()
		if err == io.EOF {
			r.done = true
			return nil
		}
		if err != nil {
			var pe *perfdata.Error
			if errors.As(err, &pe) && pe.Truncated {
				r.done = true // where scanPerfPT stopped too
				return nil
			}
			return fromPerfdata(err)
		}
		if rec.Type != perfRecordAuxtrace || len(rec.Data) < perfAuxtraceRecSize {
			continue
		}
		from, n, cut := auxtracePayload(rec, r.dataEnd)
		if auxtraceKey(rec.Data) != r.src.key {
			if cut {
				r.done = true
				return nil
			}
			continue
		}
		r.pos, r.end, r.last = from, from+n, cut
		return nil
	}
}

// PerfDataFile is a perf.data file opened by OpenPerfDataFile: its PT
// streams are read from the file as they are decoded.
type PerfDataFile struct {
	*PerfTrace
	file   *os.File
	remove bool // a SpoolPerfData copy not removed while open (Windows)
}

// Close closes the file; the streams cannot be read after it.
func (p *PerfDataFile) Close() error {
	err := p.file.Close()
	if p.remove {
		os.Remove(p.file.Name())
	}
	return err
}

// SpoolPerfData copies the perf.data that r holds (standard input, a
// pipe: what can be read only once) to a temporary file in os.TempDir,
// removed at once where the system allows it (it lives until Close), and
// opens the copy as OpenPerfDataFile opens a file: its streams are read
// from it as they are decoded, so memory does not grow with the input
// (the copy takes its size on disk, or memory if $TMPDIR is a tmpfs). A
// read error of r is returned as it is.
func SpoolPerfData(r io.Reader) (*PerfDataFile, error) {
	f, err := os.CreateTemp("", "iotap-perf-data-*")
	if err != nil {
		return nil, fmt.Errorf("intelpt: a temporary copy of the perf.data: %w", err)
	}
	p := &PerfDataFile{file: f, remove: os.Remove(f.Name()) != nil}
	rr := &readErr{r: r}
	n, err := io.Copy(f, rr)
	if err != nil {
		p.Close()
		if rr.err != nil {
			return nil, rr.err
		}
		return nil, fmt.Errorf("intelpt: a temporary copy of the perf.data (%d bytes written to %s): %w", n, os.TempDir(), err)
	}
	if p.PerfTrace, err = OpenPerfDataPT(f, n); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// OpenPerfDataFile opens the perf.data file path for its PT streams
// (OpenPerfDataPT): the streams are read from the file, not held.
func OpenPerfDataFile(path string) (*PerfDataFile, error) {
	f, st, err := mapfile.OpenStat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("intelpt: %s is not a regular file (a perf.data is read by offsets)", path)
	}
	t, err := OpenPerfDataPT(f, st.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	for i := range t.Streams {
		t.Streams[i].src.path = path
	}
	return &PerfDataFile{PerfTrace: t, file: f}, nil
}
