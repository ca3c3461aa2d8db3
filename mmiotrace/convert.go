package mmiotrace

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/iotap/iotap/internal/mapfile"
)

// AppendFunc appends the output form of one record (a line of text, an
// NDJSON object...) to dst. ConvertLog calls it from several goroutines
// at once, each with its own record: it must not keep rec or its slices.
type AppendFunc func(dst []byte, rec *Record) ([]byte, error)

// ConvertOptions tunes ConvertLog.
type ConvertOptions struct {
	// Workers is the number of parsing goroutines. 0 chooses: for a
	// mapped log (File), GOMAXPROCS when it is 4 MiB or more, else one
	// (defaultMappedWorkers); for a log read from in, one when GOMAXPROCS
	// is 2 or less or the input is smaller than 4 MiB (Size), else
	// GOMAXPROCS. For a log read, two cores hold the workers plus the
	// reading and writing goroutines: measured on a 2-core machine under load, the
	// parallel path took the same CPU time and 1.5-3x the wall time of
	// one goroutine (docs/performance.md), and a small log is not worth
	// the goroutines and buffers. Negative: an *ArgError of ConvertLog.
	Workers   int
	KeepGoing bool  // skip bad lines (counted) instead of failing
	ChunkSize int   // bytes of input per work unit; 0: 1 MiB read, 256 KiB mapped
	Size      int64 // the input's size as stored (a file's size), if known; 0: unknown
	// AccessNDJSON says that format is the Append of an NDJSONEncoder
	// without Func: R and W lines of the kernel's usual form are then
	// written straight from their bytes (the same bytes, see
	// appendAccessLines), and format gets the other lines.
	AccessNDJSON bool
	// File, when set, is the file in reads from its first byte (a log
	// the caller opened and checked, whatever it read of it since): a
	// plain regular file of 1 MiB or more is then mapped and converted
	// in place (convertMapped) instead of read through in.
	File *os.File

	mapped []byte // tests: convert this as a mapped file
}

// ConvertStats summarises a ConvertLog run.
type ConvertStats struct {
	Lines     int64  // lines read
	Records   int64  // records formatted
	Skipped   int64  // bad lines skipped (keep-going)
	FirstSkip error  // the first skipped line's error (line numbers of the whole log)
	Lost      uint64 // sum of the kernel's "Lost N events." marks
	Truncated bool   // the input ended inside a line
}

// ConvertError is an error of the AppendFunc, with the line of the record
// it was given.
type ConvertError struct {
	Line int64
	Err  error
}

func (e *ConvertError) Error() string { return fmt.Sprintf("mmiotrace: line %d: %v", e.Line, e.Err) }
func (e *ConvertError) Unwrap() error { return e.Err }

// ConvertLog reads every record of the log in (plain or compressed, as
// Reader does) and writes what format appends for each to out, in the
// order of the input. The input is cut into chunks that end on a newline,
// parsed and formatted by several goroutines, and the chunks' outputs are
// written in order: the output is the same as a Reader loop's
// (TestConvertLogMatchesReader), with the same errors, line numbers, skip
// counts and lost-event totals. Memory does not grow with the input: at
// most four chunks per worker are in flight.
//
// On a parse or format error (without KeepGoing) the output holds every
// record before the bad line, and the error is returned.
func ConvertLog(ctx context.Context, in io.Reader, out io.Writer, format AppendFunc, opt ConvertOptions) (ConvertStats, error) {
	if err := checkWorkers("ConvertOptions", opt.Workers); err != nil {
		return ConvertStats{}, err
	}
	data := opt.mapped
	if data == nil && opt.File != nil {
		if d, unmap, ok := mapFileFromStart(opt.File); ok {
			defer unmap()
			data = d
		}
	}
	if data != nil {
		if plain, err := isPlain(data); err != nil {
			return ConvertStats{}, err
		} else if plain {
			if opt.Workers <= 0 {
				opt.Workers = defaultMappedWorkers(int64(len(data)))
			}
			if opt.ChunkSize <= 0 {
				opt.ChunkSize = mappedChunk
			}
			return convertMapped(ctx, data, out, format, opt, opt.mapped == nil)
		}
	}
	src, _, closeDec, err := Decompress(in)
	if err != nil {
		return ConvertStats{}, err
	}
	defer closeDec()
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
		if opt.Workers <= 2 || opt.Size > 0 && opt.Size < 4<<20 {
			opt.Workers = 1
		}
	}
	if opt.ChunkSize <= 0 {
		opt.ChunkSize = 1 << 20
	}
	if opt.Workers == 1 {
		if opt.AccessNDJSON {
			return convertChunks(ctx, src, out, format, opt)
		}
		return convertSequential(ctx, src, out, format, opt)
	}
	return convertParallel(ctx, src, out, format, opt)
}

// convertSequential is ConvertLog on one goroutine: a Reader loop.
func convertSequential(ctx context.Context, src io.Reader, out io.Writer, format AppendFunc, opt ConvertOptions) (ConvertStats, error) {
	var st ConvertStats
	rd := NewReader(src)
	rd.comp, rd.in, rd.started, rd.closeDec = None, src, true, nil
	rd.SetKeepGoing(opt.KeepGoing)
	buf := make([]byte, 0, 256<<10)
	var rec Record
	var err error
	for n := 0; ; n++ {
		if n&0xfff == 0 && ctx.Err() != nil {
			err = ctx.Err()
			break
		}
		e := rd.ReadInto(&rec)
		if e == io.EOF {
			break
		}
		if e != nil {
			err = e
			break
		}
		if buf, e = format(buf, &rec); e != nil {
			err = &ConvertError{Line: rd.Line(), Err: e}
			break
		}
		st.Records++
		if len(buf) >= 192<<10 {
			if _, e := out.Write(buf); e != nil {
				return st, e
			}
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		if _, e := out.Write(buf); e != nil && err == nil {
			err = e
		}
	}
	st.Lines, st.Skipped, st.FirstSkip, st.Lost, st.Truncated = rd.Line(), rd.Skipped(), rd.FirstSkipError(), rd.Lost(), rd.Truncated()
	return st, err
}

// longLineError is Reader's error for a line longer than DefaultMaxLine.
type longLineError struct{ line int64 }

func (e *longLineError) Error() string {
	return fmt.Sprintf("mmiotrace: line %d: %v: line longer than %d bytes", e.line, ErrFormat, DefaultMaxLine)
}
func (e *longLineError) Unwrap() error { return ErrFormat }

// AppendText is the AppendFunc of the kernel's text format (Writer.Write):
// the record's line as AppendRecord writes it, after checkRecord.
func AppendText(dst []byte, rec *Record) ([]byte, error) {
	if err := checkRecord(rec); err != nil {
		return dst, err
	}
	return AppendRecord(dst, rec), nil
}

type convertJob struct {
	data      []byte
	out       []byte
	last      bool // the last chunk of the input
	lines     int64
	records   int64
	skipped   int64
	firstSkip *ParseError
	lost      uint64
	truncated bool
	err       error // *ParseError or *ConvertError, chunk-relative line
	done      chan struct{}
}

// run parses and formats the chunk's records as Reader.ReadInto would
// return them; line numbers in errors are chunk-relative.
// With access, the R/W lines appendAccessLines takes are written by it.
func (j *convertJob) run(format AppendFunc, keepGoing, access bool) {
	var rec Record
	data := j.data
	out := j.out[:0]
	defer func() { j.out = out }()
	for len(data) > 0 {
		var err error
		if access {
			n, k, o := appendAccessLines(data, out)
			out, data = o, data[n:]
			j.lines += k
			j.records += k
			if len(data) == 0 {
				break
			}
		}
		// R and W lines of the kernel's shape, as ReadInto.
		if end, ok := parseRWFast(data, &rec, true); ok {
			j.lines++
			data = data[end+1:]
			if out, err = format(out, &rec); err != nil {
				j.err = &ConvertError{Line: j.lines, Err: err}
				return
			}
			j.records++
			continue
		}
		if len(data) > 2 && data[1] == ' ' && (data[0] == 'R' || data[0] == 'W') {
			if end, f := parseRWFields(data, &rec); f == "" && end < len(data) && data[end] == '\n' {
				rec.Kind = KindRead
				if data[0] == 'W' {
					rec.Kind = KindWrite
				}
				rec.Line, rec.Text = data[:end], nil
				j.lines++
				data = data[end+1:]
				if out, err = format(out, &rec); err != nil {
					j.err = &ConvertError{Line: j.lines, Err: err}
					return
				}
				j.records++
				continue
			}
		}
		var line []byte
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			line, data = data, nil
			if j.last {
				j.truncated = true
			}
		} else {
			line, data = data[:i], data[i+1:]
		}
		j.lines++
		if len(line) >= DefaultMaxLine {
			// Reader's limit, with its error.
			j.err = &longLineError{line: j.lines}
			return
		}
		if f := parseLine(line, &rec); f != "" {
			if i < 0 && j.last {
				// The input ends inside this line: a cut record is
				// dropped, it is not a bad line.
				return
			}
			pe := &ParseError{Line: j.lines, Kind: rec.Kind, Field: f}
			if !keepGoing {
				j.err = pe
				return
			}
			if j.firstSkip == nil {
				j.firstSkip = pe
			}
			j.skipped++
			continue
		}
		if rec.Kind == KindMark {
			if n, ok := rec.Lost(); ok {
				j.lost += n
			}
		}
		if out, err = format(out, &rec); err != nil {
			j.err = &ConvertError{Line: j.lines, Err: err}
			return
		}
		j.records++
	}
}

func convertParallel(ctx context.Context, src io.Reader, out io.Writer, format AppendFunc, opt ConvertOptions) (ConvertStats, error) {
	var st ConvertStats
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Two chunks per worker in flight keep them busy; output buffers start
	// at twice the chunk (NDJSON is about 2.3 times the log) and keep what
	// they grow to.
	nbuf := opt.Workers*2 + 1
	free := make(chan []byte, nbuf)
	freeOut := make(chan []byte, nbuf)
	for i := 0; i < nbuf; i++ {
		free <- make([]byte, opt.ChunkSize)
		freeOut <- make([]byte, 0, 2*opt.ChunkSize)
	}
	jobs := make(chan *convertJob, nbuf)
	order := make(chan *convertJob, nbuf)
	var readErr error

	var wg sync.WaitGroup
	for w := 0; w < opt.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				j.run(format, opt.KeepGoing, opt.AccessNDJSON)
				close(j.done)
			}
		}()
	}

	// Reader: cut the input into chunks that end on a newline (the last
	// one may not).
	go func() {
		defer close(order)
		defer close(jobs)
		var carry []byte
		eof := false
		for !eof {
			var buf []byte
			select {
			case buf = <-free:
			case <-ctx.Done():
				return
			}
			var data []byte
			var rerr error
			buf, data, carry, eof, rerr = fillLines(src, buf, carry)
			if rerr != nil {
				readErr = fmt.Errorf("mmiotrace: read: %w", rerr)
			}
			if len(data) == 0 && !eof {
				free <- buf[:0]
				continue
			}
			var ob []byte
			select {
			case ob = <-freeOut:
			case <-ctx.Done():
				return
			}
			j := &convertJob{data: data, out: ob, last: eof, done: make(chan struct{})}
			order <- j
			jobs <- j
		}
	}()

	var err error
	for j := range order {
		<-j.done
		if err == nil {
			if err = st.add(j, out); err != nil {
				cancel()
			}
		}
		free <- j.data[:0]
		freeOut <- j.out[:0]
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
	}
	wg.Wait()
	if err == nil {
		err = readErr
	}
	return st, err
}

// add writes the output of job j (the next in input order) to out and
// adds its counts to st, with its error's line numbers made those of the
// whole input; it returns the write error or the job's error.
func (st *ConvertStats) add(j *convertJob, out io.Writer) error {
	var err error
	if len(j.out) > 0 {
		if _, e := out.Write(j.out); e != nil {
			err = e
		}
	}
	st.Records += j.records
	st.Lost += j.lost
	st.Truncated = st.Truncated || j.truncated
	if j.firstSkip != nil && st.FirstSkip == nil {
		j.firstSkip.Line += st.Lines
		st.FirstSkip = j.firstSkip
	}
	st.Skipped += j.skipped
	if err == nil && j.err != nil {
		switch e := j.err.(type) {
		case *ParseError:
			e.Line += st.Lines
		case *ConvertError:
			e.Line += st.Lines
		case *longLineError:
			e.line += st.Lines
		}
		err = j.err
	}
	st.Lines += j.lines
	return err
}

// convertChunks is convertParallel's work on one goroutine: chunks that
// end on a newline, each converted and written in turn (for
// AccessNDJSON, whose line transform works on chunks, not on a Reader).
func convertChunks(ctx context.Context, src io.Reader, out io.Writer, format AppendFunc, opt ConvertOptions) (ConvertStats, error) {
	var st ConvertStats
	buf := make([]byte, opt.ChunkSize)
	ob := make([]byte, 0, 2*opt.ChunkSize)
	var carry []byte
	for eof := false; !eof; {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		var data []byte
		var rerr error
		buf, data, carry, eof, rerr = fillLines(src, buf, carry)
		if rerr != nil {
			rerr = fmt.Errorf("mmiotrace: read: %w", rerr)
		}
		if len(data) > 0 || eof {
			j := convertJob{data: data, out: ob, last: eof}
			j.run(format, opt.KeepGoing, true)
			ob = j.out[:0]
			if err := st.add(&j, out); err != nil {
				return st, err
			}
		}
		if rerr != nil {
			return st, rerr
		}
	}
	return st, nil
}

// mappedChunk is the work unit of a mapped log: its NDJSON (about 2.5
// times the log) stays in the cache until it is written.
const mappedChunk = 256 << 10

// dropEvery is how often convertMapped drops the pages it is done with.
const dropEvery = 4 << 20

// defaultMappedWorkers is ConvertOptions.Workers 0 for a mapped log of
// size bytes: GOMAXPROCS for 4 MiB or more, else one. Unlike a log read
// through a reader goroutine, a mapped log is converted faster on two
// cores than on one: 'mmio read --json' on 267 MB took 0.85 times the
// wall time of one goroutine at load 24 (0.47 times at best) for 1.02
// times the CPU time (docs/performance.md).
func defaultMappedWorkers(size int64) int {
	if size < 4<<20 {
		return 1
	}
	return runtime.GOMAXPROCS(0)
}

// convertMapped is ConvertLog on a log in memory (a mapped file): it is
// cut into chunks of opt.ChunkSize bytes, each ending after a newline,
// that are converted in place, without a copy. With several workers,
// worker w converts chunks w, w+n, w+2n... into output buffers of its own
// (three, reused), and the calling goroutine writes the chunks' outputs
// in input order, taking them from the workers in turn.
//
// With drop, the pages of the log written are dropped from the resident
// set every dropEvery bytes (dropMapped): a mapped file's pages count in
// it, and memory would seem to grow with the log.
func convertMapped(ctx context.Context, data []byte, out io.Writer, format AppendFunc, opt ConvertOptions, drop bool) (ConvertStats, error) {
	var st ConvertStats
	size := opt.ChunkSize
	// After chunk i is written, the bytes before (i+1)*size-1 are not
	// read again (start reads from there); dropped is how far they are
	// dropped.
	dropped := 0
	written := func(i int) {
		end := min((i+1)*size-1, len(data))
		if drop && end-dropped >= dropEvery {
			dropMapped(data[dropped:end])
			dropped = end &^ 4095
		}
	}
	chunks := (len(data) + size - 1) / size
	// start returns where chunk i starts: after the first newline at or
	// after i*size-1 (the end of the log when there is none).
	start := func(i int) int {
		p := i * size
		if p <= 0 || p >= len(data) {
			return min(max(p, 0), len(data))
		}
		k := bytes.IndexByte(data[p-1:], '\n')
		if k < 0 {
			return len(data)
		}
		return p + k
	}
	// job converts chunk i into ob. A read past the end of a file cut
	// shorter meanwhile (mapfile) is the job's error: the output holds
	// the records before it.
	job := func(i int, ob []byte) (j *convertJob) {
		var fault error
		defer func() {
			if fault != nil {
				if j == nil {
					j = &convertJob{out: ob[:0]}
				}
				j.err = fault
			}
		}()
		defer mapfile.Catch(&fault, mapfile.Protect())
		s, e := start(i), start(i+1)
		j = &convertJob{data: data[s:e], out: ob, last: e == len(data)}
		j.run(format, opt.KeepGoing, opt.AccessNDJSON)
		return j
	}
	outCap := 5*size/2 + 64<<10
	n := min(opt.Workers, chunks)
	if n <= 1 {
		ob := make([]byte, 0, outCap)
		for i := 0; i < chunks; i++ {
			if err := ctx.Err(); err != nil {
				return st, err
			}
			j := job(i, ob)
			ob = j.out[:0]
			if err := st.add(j, out); err != nil {
				return st, err
			}
			written(i)
		}
		return st, nil
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	const perWorker = 3 // buffers: one being filled, two waiting to be written
	done := make([]chan *convertJob, n)
	free := make([]chan []byte, n)
	var wg sync.WaitGroup
	for w := range n {
		done[w] = make(chan *convertJob, perWorker)
		free[w] = make(chan []byte, perWorker)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done[w])
			for k := range perWorker {
				if w+k*n < chunks {
					free[w] <- make([]byte, 0, outCap)
				}
			}
			for i := w; i < chunks; i += n {
				var ob []byte
				select {
				case ob = <-free[w]:
				case <-ctx.Done():
					return
				}
				j := job(i, ob)
				done[w] <- j // never blocks: at most perWorker buffers
			}
		}()
	}
	var err error
	for i := 0; i < chunks && err == nil; i++ {
		j, ok := <-done[i%n]
		if !ok { // cancelled
			err = ctx.Err()
			break
		}
		err = st.add(j, out)
		free[i%n] <- j.out[:0]
		written(i)
		if err == nil {
			err = ctx.Err()
		}
	}
	// The workers must be done with data before the caller unmaps it.
	cancel()
	wg.Wait()
	return st, err
}
