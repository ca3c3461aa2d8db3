package mmiotrace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/iotap/iotap/internal/mapfile"
)

// FilterStats summarises a FilterLog run.
type FilterStats struct {
	Lines     int64  // lines read
	Kept      int64  // lines written
	Skipped   int64  // bad lines skipped (keep-going)
	FirstSkip error  // the first skipped line's error
	Lost      uint64 // sum of the kernel's "Lost N events." marks
	Truncated bool   // the input ended inside a line
}

// FilterOptions tunes FilterLog.
type FilterOptions struct {
	Workers   int  // parsing goroutines; 0: GOMAXPROCS; negative: an *ArgError of FilterLog
	KeepGoing bool // skip bad lines instead of failing
	ChunkSize int  // bytes per work unit; 0: 1 MiB
	// Progress, when set, is called from the calling goroutine after each
	// chunk with the input bytes done and the total (-1 when unknown).
	Progress func(done, total int64)
}

// FilterLog copies the lines of the log in (plain or compressed) that pass
// f to out, byte for byte and in order. When f is stateless the input is
// cut into chunks on line boundaries and parsed by several goroutines;
// otherwise it is streamed through a Stream. BAR ranges are resolved from
// the PCIDEV records at the head of the log.
func FilterLog(ctx context.Context, in io.Reader, out io.Writer, f *Filter, opt FilterOptions) (FilterStats, error) {
	if err := checkWorkers("FilterOptions", opt.Workers); err != nil {
		return FilterStats{}, err
	}
	if opt.Workers != 1 && f.Stateless() {
		// A plain regular file is mapped and cut in place: no copy.
		if data, unmap, ok := mapFile(in); ok {
			defer unmap()
			if plain, err := isPlain(data); err != nil {
				return FilterStats{}, err
			} else if plain {
				if opt.Workers <= 0 {
					opt.Workers = runtime.GOMAXPROCS(0)
				}
				if opt.ChunkSize <= 0 {
					opt.ChunkSize = 1 << 20
				}
				return filterParallel(ctx, nil, data, out, f, opt)
			}
		}
	}
	src, _, closeDec, err := Decompress(in)
	if err != nil {
		return FilterStats{}, err
	}
	defer closeDec()
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.ChunkSize <= 0 {
		opt.ChunkSize = 1 << 20
	}
	if !f.Stateless() || opt.Workers == 1 {
		return filterSequential(ctx, src, out, f, opt)
	}
	return filterParallel(ctx, src, nil, out, f, opt)
}

func filterSequential(ctx context.Context, src io.Reader, out io.Writer, f *Filter, opt FilterOptions) (FilterStats, error) {
	var st FilterStats
	rd := NewReader(src)
	rd.comp, rd.in, rd.started, rd.closeDec = None, src, true, nil
	rd.SetKeepGoing(opt.KeepGoing)
	w := NewWriter(out)
	s := NewStream(f)
	var rec Record
	for n := 0; ; n++ {
		if n&0xfff == 0 && ctx.Err() != nil {
			return st, ctx.Err()
		}
		err := rd.ReadInto(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return st, err
		}
		keep, err := s.Keep(&rec)
		if err != nil {
			return st, err
		}
		if keep {
			st.Kept++
			if err := w.WriteLine(rec.Line); err != nil {
				return st, err
			}
		}
	}
	st.Lines, st.Skipped, st.FirstSkip, st.Lost, st.Truncated = rd.Line(), rd.Skipped(), rd.FirstSkipError(), rd.Lost(), rd.Truncated()
	return st, w.Flush()
}

type chunkJob struct {
	data      []byte
	out       []byte
	lines     int64
	kept      int64
	skipped   int64
	firstSkip *ParseError
	lost      uint64
	err       *ParseError
	longLine  int64 // chunk-relative number of a line of DefaultMaxLine bytes or more
	fault     error // a mapped input cut shorter (mapfile.FaultError)
	done      chan struct{}
}

// runMapped is run on a chunk of a mapped input: a read past the end of
// a file cut shorter meanwhile is j.fault, not a crash.
func (j *chunkJob) runMapped(f *Filter, keepGoing bool) {
	defer mapfile.Catch(&j.fault, mapfile.Protect())
	j.run(f, keepGoing)
}

// run filters the chunk's lines; line numbers in errors are chunk-relative.
// Every line is fully parsed and validated, kept or not, so that a bad
// line is reported (or counted with keep-going) exactly as Reader does.
func (j *chunkJob) run(f *Filter, keepGoing bool) {
	var rec Record
	data := j.data
	out := j.out[:0]
	// Without value or time criteria the value, PC and timestamp of R/W
	// lines are validated but not converted.
	full := f.ValueMask != 0 || f.HasStart || f.HasEnd
	var sh lineShapes
	for len(data) > 0 {
		// R and W lines of the kernel's shape (nearly all of a log) are
		// parsed in place, in a loop of their own.
		var lines, kept int64
		if !full && !sh.off {
			// Without value or time criteria: checkRW, and the lines
			// it leaves one at a time through parseRWFast (all of them
			// once the shapes miss too often: sh.off).
			data, out, lines, kept = checkRW(f, data, out, &sh)
			if end, ok := parseRWFast(data, &rec, false); ok {
				j.lines += lines + 1
				j.kept += kept
				if f.matchRW(&rec) {
					j.kept++
					out = append(out, data[:end+1]...)
				}
				data = data[end+1:]
				continue
			}
		} else {
			data, out, lines, kept = filterRWFast(f, data, out, full)
		}
		j.lines += lines
		j.kept += kept
		if len(data) == 0 {
			break
		}
		j.lines++
		var line, whole []byte
		var fld string
		// Other R and W lines are parsed in place too.
		if len(data) > 2 && data[1] == ' ' && (data[0] == 'R' || data[0] == 'W') {
			var end int
			var ok bool
			if full {
				var bad string
				end, bad = parseRWFields(data, &rec)
				ok = bad == ""
			} else {
				end, ok = scanRWFields(data, &rec)
			}
			if ok && end < len(data) && data[end] == '\n' {
				rec.Kind = KindRead
				if data[0] == 'W' {
					rec.Kind = KindWrite
				}
				rec.Line, rec.Text = data[:end], nil
				whole, data = data[:end+1], data[end+1:]
				if f.matchRW(&rec) {
					j.kept++
					out = append(out, whole...)
				}
				continue
			}
		}
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			line, whole, data = data, data, nil
		} else {
			line, whole, data = data[:i], data[:i+1], data[i+1:]
		}
		if len(line) >= DefaultMaxLine {
			// Reader's limit, with its error, whatever keep-going says.
			j.longLine = j.lines
			break
		}
		if fld = parseLine(line, &rec); fld != "" {
			if i < 0 {
				// The input ends inside this line (FilterStats.Truncated):
				// a cut record is dropped, it is not a bad line.
				continue
			}
			pe := &ParseError{Line: j.lines, Kind: rec.Kind, Field: fld}
			if !keepGoing {
				j.err = pe
				break
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
		if f.Match(&rec) {
			j.kept++
			out = append(out, whole...)
			if i < 0 {
				out = append(out, '\n')
			}
		}
	}
	j.out = out
}

// filterRWFast filters the lines at the start of data that parseRWFast
// takes, appending those f keeps to out, and returns the rest of data
// from the first line it does not take, the output, and the numbers of
// lines read and kept. With full false the R/W fields f does not look
// at are checked but not converted.
func filterRWFast(f *Filter, data, out []byte, full bool) ([]byte, []byte, int64, int64) {
	s := rwScan{data: data, out: out}
	s.filter(f, full)
	return s.data, s.out, s.lines, s.kept
}

// rwScan is filterRWFast's state, kept in memory rather than in
// registers that every call would save and restore.
type rwScan struct {
	data, out   []byte
	lines, kept int64
	rec         Record
}

func (s *rwScan) filter(f *Filter, full bool) {
	for {
		end, ok := parseRWFast(s.data, &s.rec, full)
		if !ok {
			return
		}
		s.lines++
		if (f.Kinds == 0 || f.Kinds.Has(s.rec.Kind)) && f.matchRW(&s.rec) {
			s.kept++
			s.out = append(s.out, s.data[:end+1]...)
		}
		s.data = s.data[end+1:]
	}
}

// filterParallel filters src, or mapped when it is not nil.
func filterParallel(ctx context.Context, src io.Reader, mapped []byte, out io.Writer, f *Filter, opt FilterOptions) (FilterStats, error) {
	var st FilterStats
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	nbuf := opt.Workers * 4
	free := make(chan []byte, nbuf)
	freeOut := make(chan []byte, nbuf)
	for i := 0; i < nbuf; i++ {
		if mapped == nil { // a mapped input is cut in place
			free <- make([]byte, opt.ChunkSize)
		}
		// Output buffers start small (filters usually keep little) and
		// keep what they grow to: less to allocate, and to collect,
		// at the start.
		freeOut <- make([]byte, 0, min(opt.ChunkSize, 64<<10))
	}
	jobs := make(chan *chunkJob, nbuf)
	order := make(chan *chunkJob, nbuf)
	var readErr error
	var splitErr error // a fault reading a mapped input
	var truncated bool
	first := true

	var wg sync.WaitGroup
	for w := 0; w < opt.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if mapped != nil {
					j.runMapped(f, opt.KeepGoing)
				} else {
					j.run(f, opt.KeepGoing)
				}
				close(j.done)
			}
		}()
	}

	// Reader: cut the input into chunks that end on a newline.
	go func() {
		defer close(order)
		defer close(jobs)
		if mapped != nil {
			defer mapfile.Catch(&splitErr, mapfile.Protect())
			for off := 0; off < len(mapped); {
				if ctx.Err() != nil {
					return
				}
				end := min(off+opt.ChunkSize, len(mapped))
				if end < len(mapped) {
					if k := bytes.IndexByte(mapped[end:], '\n'); k >= 0 {
						end += k + 1
					} else {
						end = len(mapped)
					}
				}
				data := mapped[off:end]
				off = end
				if end == len(mapped) && data[len(data)-1] != '\n' {
					truncated = true
				}
				if first {
					first = false
					if f.NeedsBARs() {
						if err := resolveFromHead(f, data); err != nil {
							readErr = err
							return
						}
					}
				}
				j := &chunkJob{data: data, out: <-freeOut, done: make(chan struct{})}
				order <- j
				jobs <- j
			}
			return
		}
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
				readErr = rerr
			}
			if eof && len(data) > 0 && data[len(data)-1] != '\n' {
				truncated = true
			}
			if len(data) == 0 {
				free <- buf[:0]
				continue
			}
			if first {
				first = false
				if f.NeedsBARs() {
					if err := resolveFromHead(f, data); err != nil {
						readErr = err
						return
					}
				}
			}
			j := &chunkJob{data: data, out: <-freeOut, done: make(chan struct{})}
			order <- j
			jobs <- j
		}
	}()

	var err error
	var done int64
	total := int64(-1)
	if mapped != nil {
		total = int64(len(mapped))
	}
	for j := range order {
		<-j.done
		if err == nil {
			if j.fault != nil {
				err = j.fault
				cancel()
			} else if j.err != nil {
				j.err.Line += st.Lines
				err = j.err
				cancel()
			} else if j.longLine != 0 {
				err = &longLineError{line: st.Lines + j.longLine}
				cancel()
			} else {
				if j.firstSkip != nil && st.FirstSkip == nil {
					j.firstSkip.Line += st.Lines
					st.FirstSkip = j.firstSkip
				}
				st.Lines += j.lines
				st.Kept += j.kept
				st.Skipped += j.skipped
				st.Lost += j.lost
				if _, werr := out.Write(j.out); werr != nil {
					err = werr
					cancel()
				}
				done += int64(len(j.data))
				if opt.Progress != nil {
					opt.Progress(done, total)
				}
			}
		}
		if mapped == nil {
			free <- j.data[:0]
		}
		freeOut <- j.out[:0]
	}
	wg.Wait()
	if err == nil {
		err = splitErr
	}
	if err != nil {
		return st, err
	}
	if readErr != nil {
		return st, fmt.Errorf("mmiotrace: filter: %w", readErr)
	}
	st.Truncated = truncated
	if ctx.Err() != nil {
		return st, ctx.Err()
	}
	return st, nil
}

// resolveFromHead learns the BARs from the PCIDEV records of the first
// chunk (the kernel prints them right after VERSION) and resolves f.
func resolveFromHead(f *Filter, data []byte) error {
	m := NewBARMap()
	var rec Record
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		if parseLine(data[:i], &rec) == "" && rec.Kind == KindPCIDev {
			m.AddPCIDev(&rec.PCI)
		}
		data = data[min(i+1, len(data)):]
	}
	return f.Resolve(m)
}

// fillLines fills buf (grown when the carried partial line does not fit)
// with carry and then src, and cuts it after its last newline. It returns
// the buffer used, the whole lines read (data; at the end of src,
// everything left, which may end without a newline), the partial line to
// carry to the next round (carry's storage reused), whether src ended, and
// a read error other than io.EOF. data is empty, and everything carried,
// when no newline was read before the end.
func fillLines(src io.Reader, buf, carry []byte) (b, data, rest []byte, eof bool, err error) {
	buf = buf[:cap(buf)]
	if len(carry) >= len(buf) { // a line longer than the chunk: grow
		buf = make([]byte, 2*len(carry))
	}
	n := copy(buf, carry)
	for n < len(buf) {
		m, rerr := src.Read(buf[n:])
		n += m
		if rerr != nil {
			eof = true
			if !errors.Is(rerr, io.EOF) {
				err = rerr
			}
			break
		}
	}
	data, rest = buf[:n], carry[:0]
	if eof {
		return buf, data, rest, true, err
	}
	k := bytes.LastIndexByte(data, '\n')
	if k < 0 { // no newline yet: keep everything for the next round
		return buf, nil, append(rest, data...), false, nil
	}
	return buf, data[:k+1], append(rest, data[k+1:]...), false, nil
}

// isPlain reports whether a mapped log is plain text (not compressed);
// the error is a fault reading it (mapfile).
func isPlain(data []byte) (plain bool, err error) {
	defer mapfile.Catch(&err, mapfile.Protect())
	return DetectCompression(data) == None, nil
}
