package intelpt

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/iotap/iotap/internal/mapfile"
)

// MappedTrace is a range of a raw trace file given to the flow decoders
// without reading it into memory: on Linux a regular file is mapped
// read-only and DropBefore takes the pages the decoder has gone past out
// of the process's resident set, so that decoding a trace of any size
// keeps the memory flat; elsewhere, and for anything but a regular file,
// the range is read (ReadFileRange) and DropBefore does nothing.
type MappedTrace struct {
	// Data is the trace: the range of the file. With a mapping, it stays
	// valid until Close; a dropped page is read from the file again if
	// touched.
	Data []byte

	file     *os.File         // the open file, while mapped
	off      int64            // Data's offset in the file
	mapping  *mapfile.Mapping // the mapping of the whole file
	mem      []byte           // mapping.Data, page-aligned (nil: read)
	skip     int              // Data's offset in mem
	dropped  int              // mem[:dropped] has been dropped
	lag      int64            // DropLag, less in tests
	dropFunc func([]byte)
}

// DropLag is how far behind the offset given to DropBefore pages are
// kept: the decoders look back no further than the packet they are in.
const DropLag = 1 << 20

// MapFileRange returns size bytes of file from off (to its end when size
// is 0), as ReadFileRange does, mapped when it can be (see MappedTrace).
// Close releases it.
//
// A pipe, a FIFO or a character device (anything but a regular file or a
// directory), and "-" for standard input, cannot be mapped: the range is
// read from it as a stream, copied to a temporary file (spoolMap) and
// that is mapped, or where nothing is mapped read into memory.
func MapFileRange(file string, off, size uint64) (*MappedTrace, error) {
	if file == "-" {
		return readStreamRange("standard input", os.Stdin, off, size)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("intelpt: %v", err)
	}
	if m := mapRange(f, off, size); m != nil {
		return m, nil
	}
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		defer f.Close()
		return readStreamRange(file, f, off, size)
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() == 0 && off == 0 && size == 0 {
		f.Close()
		return &MappedTrace{}, nil // an empty trace: no PSB, FlowLoss says so
	}
	f.Close()
	b, err := ReadFileRange(file, off, size)
	if err != nil {
		return nil, err
	}
	return &MappedTrace{Data: b}, nil
}

// readStreamRange reads size bytes (to the end when size is 0) from off
// of a stream named name.
func readStreamRange(name string, r io.Reader, off, size uint64) (*MappedTrace, error) {
	if n, err := io.CopyN(io.Discard, r, int64(off)); err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("intelpt: %s: offset %#x is beyond its %d bytes", name, off, n)
		}
		return nil, fmt.Errorf("intelpt: %s: %w", name, err)
	}
	src := r
	if size != 0 {
		src = io.LimitReader(r, int64(size))
	}
	if m, n, err := spoolMap(name, src); m != nil || err != nil {
		if err == nil && size != 0 && uint64(n) < size {
			m.Close()
			return nil, fmt.Errorf("intelpt: %s: range %#x-%#x is beyond its %d bytes", name, off, off+size, off+uint64(n))
		}
		return m, err
	}
	if size == 0 {
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("intelpt: %s: %w", name, err)
		}
		return &MappedTrace{Data: b}, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(size)))
	if err != nil {
		return nil, fmt.Errorf("intelpt: %s: %w", name, err)
	}
	if uint64(len(b)) < size {
		return nil, fmt.Errorf("intelpt: %s: range %#x-%#x is beyond its %d bytes", name, off, off+size, off+uint64(len(b)))
	}
	return &MappedTrace{Data: b}, nil
}

// spoolMap copies r (named name) to a temporary file in os.TempDir,
// removed at once (it lives until the mapping is closed), and maps it,
// so that the trace is not held in memory (DropBefore drops the pages
// the decoder has gone past); the copy costs its size on disk (or in
// memory if $TMPDIR is a tmpfs). It returns the mapping and the bytes
// copied, or nil, 0, nil where nothing is mapped (r is untouched: the
// caller reads it).
func spoolMap(name string, r io.Reader) (*MappedTrace, int64, error) {
	if !canMap {
		return nil, 0, nil
	}
	tmp, err := os.CreateTemp("", "iotap-pt-stream-*")
	if err != nil {
		return nil, 0, fmt.Errorf("intelpt: a temporary copy of %s: %w", name, err)
	}
	os.Remove(tmp.Name()) // the open file stays until Close
	bw := bufio.NewWriterSize(tmp, 1<<20)
	rr := &readErr{r: r}
	n, err := io.Copy(bw, rr)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		tmp.Close()
		if rr.err != nil {
			return nil, n, fmt.Errorf("intelpt: %s: %w", name, rr.err)
		}
		return nil, n, fmt.Errorf("intelpt: a temporary copy of %s (%d bytes written to %s): %w", name, n, os.TempDir(), err)
	}
	if n == 0 {
		tmp.Close()
		return &MappedTrace{Data: []byte{}}, 0, nil
	}
	if m := mapRange(tmp, 0, uint64(n)); m != nil {
		return m, n, nil
	}
	// not mapped after all: read back the copy
	b := make([]byte, n)
	_, err = tmp.ReadAt(b, 0)
	tmp.Close()
	if err != nil {
		return nil, n, fmt.Errorf("intelpt: a temporary copy of %s: %w", name, err)
	}
	return &MappedTrace{Data: b}, n, nil
}

// readErr keeps the error of reading r (not io.EOF), so that a copy's
// error says whether reading or writing failed.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// mapRange maps size bytes of f from off (to its end when size is 0):
// nil when it cannot, else the mapping, which closes f with Close.
func mapRange(f *os.File, off, size uint64) *MappedTrace {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	fsize := uint64(st.Size())
	end := fsize
	if size != 0 {
		end = off + size
	}
	if off >= fsize || end > fsize || end <= off {
		return nil
	}
	mp, ok := mapFile(f, int(fsize))
	if !ok {
		return nil
	}
	mem := mp.Data
	return &MappedTrace{Data: mem[off:end], file: f, off: int64(off), mapping: mp, mem: mem, skip: int(off), lag: DropLag, dropFunc: dropPages}
}

// Mapped reports whether m's Data is a mapping of the file.
func (m *MappedTrace) Mapped() bool { return m.mem != nil }

// DropBefore drops the whole pages of Data before off-DropLag from the
// resident set (a mapping only; offsets must not go back by more than
// DropLag). It is meant for FlowOptions.Progress.
func (m *MappedTrace) DropBefore(off int64) {
	if m.mem == nil || off < m.lag {
		return
	}
	page := os.Getpagesize()
	end := (m.skip + int(off-m.lag)) &^ (page - 1)
	if end > len(m.mem) {
		end = len(m.mem) &^ (page - 1)
	}
	if end > m.dropped {
		m.dropFunc(m.mem[m.dropped:end])
		m.dropped = end
	}
}

// Stats is ComputeStats(m.Data, cfg), of a mapping read from the file
// (in constant memory: the dropped pages stay out of the resident set).
// A file cut shorter while mapped gives the statistics of what was read
// and a *mapfile.FaultError, "FILE: truncated while reading at offset N".
func (m *MappedTrace) Stats(cfg Config) (Stats, error) {
	if m.mem != nil {
		r := &countingReader{r: io.NewSectionReader(m.file, m.off, int64(len(m.Data)))}
		st, err := ComputeStatsReader(r, cfg)
		if err == nil {
			if r.n < int64(len(m.Data)) {
				return st, &mapfile.FaultError{File: m.file.Name(), Offset: m.off + r.n}
			}
			return st, nil
		}
	}
	var st Stats
	err := m.Do(func() error {
		st = ComputeStats(m.Data, cfg)
		return nil
	})
	return st, err
}

// FlowLoss is FlowLoss(m.Data, cfg), of a mapping read from the file
// (m.Stats). A file cut shorter while mapped is one more loss, "FILE:
// truncated while reading at offset N".
func (m *MappedTrace) FlowLoss(cfg Config) []string {
	st, err := m.Stats(cfg)
	loss := flowLoss(st)
	if err != nil {
		loss = append(loss, err.Error())
	}
	return loss
}

// Do runs fn, which reads m.Data on the calling goroutine, and returns
// its error. A read of a mapping whose file was cut shorter meanwhile (a
// trace still being written, copied or rotated) faults; Do returns that
// as a *mapfile.FaultError, "FILE: truncated while reading at offset N",
// instead of letting the fault (SIGBUS) kill the process. Code reading
// m.Data on other goroutines needs runtime/debug.SetPanicOnFault there.
func (m *MappedTrace) Do(fn func() error) error { return mapfile.Do(fn) }

// Close unmaps the trace and closes the file; Data must not be used
// after it.
func (m *MappedTrace) Close() error {
	if m.mem == nil {
		return nil
	}
	m.mapping.Close()
	m.mem, m.Data = nil, nil
	return m.file.Close()
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}
