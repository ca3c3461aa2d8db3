package cut

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/iotap/iotap/internal/outfile"
)

// DefaultIndexEvery is how many bytes an IndexWriter lets the trace grow
// between two updates of its index.
const DefaultIndexEvery = 4 << 20

// maxIndexQueue bounds the chunks an IndexWriter holds for its indexer
// (at most this many writes not indexed yet); beyond, indexing stops.
const maxIndexQueue = 256

// IndexWriterOptions control NewIndexWriter.
type IndexWriterOptions struct {
	// Interval is the distance between checkpoints (0: DefaultInterval).
	Interval int64
	// Every is how many bytes the trace grows between two updates of the
	// index (0: DefaultIndexEvery).
	Every int64
}

// IndexWriter indexes a trace file as it is written, so that a capture
// stopped at any point (killed, disk full) leaves an index of what it
// wrote. Writes go to the file and, copied, to an indexer goroutine that
// reads the records as BuildIndex does; every Every bytes of records it
// replaces path+IndexSuffix (temporary file and rename, 0600) with a
// partial index (Index.Partial) of the records so far, and Close writes
// the complete one, byte for byte what BuildIndex makes of the finished
// file. Place it under any buffering (a bufio.Writer over it), so that the
// bytes it indexes are in the file. Indexing never slows the writer down:
// when the indexer falls behind by maxIndexQueue writes, or the trace
// does not parse, it stops (Close says why) and the file is written on.
type IndexWriter struct {
	w     io.Writer
	path  string
	every int64
	ch    chan []byte
	done  chan struct{}
	b     *indexer
	f     Format

	mu       sync.Mutex
	stopped  error // why indexing stopped (nil: it runs)
	closed   bool
	indexed  int64 // bytes of whole records indexed
	written  int64 // bytes written to w
	partials int   // partial indexes written
}

// NewIndexWriter returns a writer that writes to w, the file at path,
// holding a trace of format f from its first byte, and indexes it.
func NewIndexWriter(w io.Writer, path string, f Format, o IndexWriterOptions) (*IndexWriter, error) {
	if f == FormatUnknown || f >= FormatPT {
		return nil, fmt.Errorf("cut: index: %v traces are not indexed", f)
	}
	if o.Every <= 0 {
		o.Every = DefaultIndexEvery
	}
	iw := &IndexWriter{w: w, path: path, every: o.Every, ch: make(chan []byte, maxIndexQueue), done: make(chan struct{}),
		b: newIndexer(f, o.Interval), f: f}
	go iw.run()
	return iw, nil
}

// Write writes p to the file and hands what was written to the indexer.
func (iw *IndexWriter) Write(p []byte) (int, error) {
	n, err := iw.w.Write(p)
	iw.mu.Lock()
	iw.written += int64(n)
	running := iw.stopped == nil && !iw.closed
	if running && n > 0 {
		select {
		case iw.ch <- append([]byte(nil), p[:n]...):
		default:
			iw.stopped = errors.New("the indexer fell behind the capture")
			close(iw.ch)
			iw.closed = true
		}
	}
	iw.mu.Unlock()
	return n, err
}

// chanReader reads the chunks of a channel until it is closed.
type chanReader struct {
	ch  <-chan []byte
	cur []byte
}

func (r *chanReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		b, ok := <-r.ch
		if !ok {
			return 0, io.EOF
		}
		r.cur = b
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

func (iw *IndexWriter) stop(err error) {
	iw.mu.Lock()
	if iw.stopped == nil {
		iw.stopped = err
	}
	iw.mu.Unlock()
}

// run is the indexer: it reads the records as they come and writes a
// partial index every iw.every bytes.
func (iw *IndexWriter) run() {
	defer close(iw.done)
	defer func() {
		for range iw.ch { // let writes go on if indexing stopped early
		}
	}()
	file, err := os.Open(iw.path)
	if err != nil {
		iw.stop(err)
		return
	}
	defer file.Close()
	sc := newScanner(iw.f)
	sc.reset(&chanReader{ch: iw.ch}, 0, NoTime)
	next := iw.every
	var u unit
	for {
		off := sc.offset()
		iw.b.checkpoint(off)
		raw, err := sc.next(&u)
		if err == io.EOF {
			break
		}
		if err != nil {
			iw.stop(err)
			return
		}
		if err := iw.b.record(off, &u, raw); err != nil {
			iw.stop(err)
			return
		}
		end := sc.offset()
		iw.mu.Lock()
		iw.indexed = end
		iw.mu.Unlock()
		if end >= next {
			next = end + iw.every
			if err := iw.write(file, end, 0, true); err != nil {
				iw.stop(err)
				return
			}
			iw.mu.Lock()
			iw.partials++
			iw.mu.Unlock()
		}
	}
}

// write writes the index of the first size bytes.
func (iw *IndexWriter) write(file io.ReaderAt, size, modTime int64, partial bool) error {
	ix, err := iw.b.snapshot(file, size, modTime, partial)
	if err != nil {
		return err
	}
	data, err := ix.MarshalBinary()
	if err != nil {
		return err
	}
	var ins outfile.Inputs
	ins.Add(iw.path)
	return outfile.WriteFile(iw.path+IndexSuffix, data, outfile.Options{Inputs: &ins})
}

// Partials returns the number of partial indexes written so far.
func (iw *IndexWriter) Partials() int {
	iw.mu.Lock()
	defer iw.mu.Unlock()
	return iw.partials
}

// Close ends indexing and writes the complete index of the file. Call it
// once everything is written to the file (after flushing the buffers above
// it, and closing the file: the index records its modification time). It
// does not close the file. An error says why the file has no complete
// index (the last partial one, if any, stays valid for what it covers).
func (iw *IndexWriter) Close() error {
	iw.mu.Lock()
	if !iw.closed {
		close(iw.ch)
		iw.closed = true
	}
	iw.mu.Unlock()
	<-iw.done
	iw.mu.Lock()
	stopped, indexed, written := iw.stopped, iw.indexed, iw.written
	iw.mu.Unlock()
	if stopped != nil {
		return fmt.Errorf("cut: index of %s: %w", iw.path, stopped)
	}
	if written == 0 {
		return nil // an empty file: nothing to index
	}
	file, err := os.Open(iw.path)
	if err != nil {
		return err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return err
	}
	if st.Size() != written || indexed != written {
		return fmt.Errorf("cut: index of %s: %d bytes written, %d indexed, the file has %d", iw.path, written, indexed, st.Size())
	}
	iw.b.checkpoint(indexed)
	return iw.write(file, indexed, st.ModTime().UnixNano(), false)
}
