package timeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/iotap/iotap/internal/outfile"
)

// DefaultMaxSize is the default bound of every file ExportSplit writes:
// 256 MiB. The Perfetto UI loads a whole trace into its WebAssembly
// trace processor in the browser tab, which holds 2 to 4 times the file
// size (Perfetto's "Visualising large traces" page), and a tab typically
// gets 2 GB: a 256 MiB trace takes at most 1 GiB there and opens
// comfortably, 512 MiB is at the edge and larger files fail to open.
const DefaultMaxSize = 256 << 20

// MinMaxSize is the smallest bound ExportSplit accepts.
const MinMaxSize = 64 << 10

// minMaxSize is MinMaxSize; tests lower it to split small inputs.
var minMaxSize int64 = MinMaxSize

// IndexVersion is the version of index.json.
const IndexVersion = 1

// SplitOptions configure ExportSplit.
type SplitOptions struct {
	// MaxSize bounds the size of every file written (at least
	// MinMaxSize); 0 writes one file whatever its size.
	MaxSize int64
}

// Window is one detail file of a split timeline.
type Window struct {
	// File is the file's name in the detail directory (0001.pftrace...).
	File string `json:"file"`
	// StartNS and EndNS bound the window on the timeline clock: it holds
	// the events at StartNS <= t < EndNS.
	StartNS uint64 `json:"start_ns"`
	EndNS   uint64 `json:"end_ns"`
	Bytes   int64  `json:"bytes"`
	// Events counts the input events drawn in the window; PerInput per
	// input, in the order of Index.Inputs.
	Events   int64   `json:"events"`
	PerInput []int64 `json:"events_per_input"`
	// Lost counts the events the inputs record as lost inside the window.
	Lost uint64 `json:"lost"`
	// Top is the busiest tracks of the window (registers, endpoints,
	// event names), most events first.
	Top []Activity `json:"top,omitempty"`
}

// IndexInput is one input of a split timeline.
type IndexInput struct {
	Path      string `json:"path"`
	Stream    string `json:"stream,omitempty"`
	Kind      Kind   `json:"kind"`
	Events    int64  `json:"events"`
	Lost      int64  `json:"lost"`
	Skipped   int64  `json:"skipped"`
	Truncated bool   `json:"truncated,omitempty"`
}

// Index is the detail directory's index.json.
type Index struct {
	Version int `json:"version"`
	// Overview is the overview trace's file name (in the directory that
	// holds the detail directory).
	Overview string `json:"overview"`
	MaxSize  int64  `json:"max_size"`
	// BucketNS is the width of the overview's counter buckets.
	BucketNS uint64       `json:"bucket_ns"`
	Buckets  int          `json:"buckets"`
	StartNS  uint64       `json:"start_ns"`
	EndNS    uint64       `json:"end_ns"`
	Inputs   []IndexInput `json:"inputs"`
	Windows  []Window     `json:"windows"`
}

// SplitStats is the result of ExportSplit.
type SplitStats struct {
	*Stats
	// Split is false when the whole timeline fit in one file (the output
	// is then what Export writes).
	Split bool `json:"split"`
	// Dir is the detail directory (out.d for out.pftrace).
	Dir           string `json:"dir,omitempty"`
	OverviewBytes int64  `json:"overview_bytes,omitempty"`
	Index         *Index `json:"index,omitempty"`
}

// DetailDir returns the directory of the detail windows of the overview
// out: out without its extension, plus ".d".
func DetailDir(out string) string {
	return strings.TrimSuffix(out, filepath.Ext(out)) + ".d"
}

// ownFile matches the names ExportSplit writes in a detail directory. It
// is compiled on first use: compiling it at init was 57 k instructions of
// every iotap start (docs/performance.md).
var ownFile = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([0-9]{4,}\.pftrace|index\.json)$`)
})

// ownDir reports whether dir holds only what ExportSplit writes there (it
// may then be replaced), and whether it exists.
func ownDir(dir string) (own, exists bool, err error) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true, false, nil
	}
	if err != nil {
		return false, false, err
	}
	if !fi.IsDir() {
		return false, true, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, true, err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !ownFile().MatchString(e.Name()) {
			return false, true, nil
		}
	}
	return true, true, nil
}

// ExportSplit is Export to the file out (interrupted by ctx, it keeps the
// files with the events read so far and returns ctx's error with
// Stats.Interrupted set), never writing a file larger than
// so.MaxSize. When the whole timeline fits, out is that trace. Otherwise:
//
//   - the detail directory (DetailDir: out.d for out.pftrace) holds the
//     full detail, split at time boundaries into windows 0001.pftrace,
//     0002.pftrace... each under the bound and a trace of its own on the
//     same clock (tracks are declared again in each; a USB transfer in
//     flight at a boundary ends there and begins again in the next
//     window, with a "window" argument saying so), and index.json (Index:
//     the windows, their time ranges, sizes, event counts and busiest
//     tracks);
//   - out is the overview of the whole capture: per input, counters of
//     its events in time buckets (events/s; USB bytes/s, transfers/s and
//     errors/s per endpoint; MMIO accesses/s per BAR and for its busiest
//     registers, named; user_events per event name; with Options.PTCalls,
//     the time per function of the busiest functions), lost events as
//     counters and instants, the markers, and a "detail windows" track
//     whose slices name the file holding each window. The bucket width is
//     the narrowest power of two microseconds that gives at most 2048
//     buckets, widened further until the overview fits the bound.
//
// The inputs are read once; memory is bounded by the number of tracks and
// counter series, not by the capture's length. The outputs are written
// 0600 through temporary names (the detail directory is assembled under a
// hidden name and renamed); an existing detail directory is replaced only
// when it holds nothing but such windows and index.json.
func ExportSplit(ctx context.Context, out string, paths []string, opt Options, so SplitOptions) (*SplitStats, error) {
	if so.MaxSize != 0 && so.MaxSize < minMaxSize {
		return nil, fmt.Errorf("max size %d: less than the smallest bound, %d bytes", so.MaxSize, minMaxSize)
	}
	var ins outfile.Inputs
	ins.Add(paths...)
	if err := ins.Check(out); err != nil {
		return nil, err
	}
	if so.MaxSize == 0 {
		f, err := outfile.Create(out, outfile.Options{Inputs: &ins})
		if err != nil {
			return nil, err
		}
		defer f.Abort()
		st, err := Export(ctx, f, paths, opt)
		if err == nil {
			err = f.Commit()
		}
		return &SplitStats{Stats: st}, err
	}
	if err := outfile.Check(out, outfile.Options{Inputs: &ins}); err != nil {
		return nil, err // refused before anything is read
	}
	dir := DetailDir(out)
	own, exists, err := ownDir(dir)
	if err != nil {
		return nil, err
	}
	if !own {
		return nil, fmt.Errorf("%s exists and holds other files than detail windows: move it away", dir)
	}
	stage, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(dir)+".tmp")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage) // gone by then when all went well

	sp := &splitter{max: so.MaxSize, stage: stage, ov: newOverview()}
	sp.target = so.MaxSize - min(max(so.MaxSize/8, 16<<10), 8<<20)
	first, err := sp.create()
	if err != nil {
		return nil, err
	}
	defer func() {
		if sp.f != nil {
			sp.aw.Close()
			sp.f.Abort()
		}
	}()

	var prog progress
	var srcs []Source
	defer func() {
		for _, s := range srcs {
			s.Close()
		}
	}()
	for _, p := range paths {
		ss, err := open(p, &opt, &prog)
		if err != nil {
			return &SplitStats{Stats: &Stats{}}, err
		}
		srcs = append(srcs, ss...)
	}
	st, stopped := merge(ctx, first, srcs, opt, &prog, sp)
	res := &SplitStats{Stats: st}
	if stopped != nil && (st == nil || !st.Interrupted) {
		return res, stopped
	}
	// Interrupted (st.Interrupted): the files hold the events read so far,
	// ended validly; they are kept and ctx's error returned at the end.
	if err := sp.closeFile(); err != nil {
		return res, err
	}
	if len(sp.wins) == 1 {
		// It all fit: the one window is the trace.
		if err := outfile.Move(filepath.Join(stage, sp.wins[0].File), out, outfile.Options{Inputs: &ins}); err != nil {
			return res, err
		}
		if exists {
			os.RemoveAll(dir) // windows of an earlier run, now stale
		}
		return res, stopped
	}

	// The overview: widen the buckets until it fits.
	for {
		var cw countWriter
		sp.ov.write(&cw, sp.overviewWindows(filepath.Base(dir)))
		if cw.n <= so.MaxSize || sp.ov.nb <= 1 {
			break
		}
		sp.ov.coarsen()
	}
	f, err := outfile.Create(out, outfile.Options{Inputs: &ins})
	if err != nil {
		return res, err
	}
	defer f.Abort()
	ws := sp.ov.write(f, sp.overviewWindows(filepath.Base(dir)))
	if err := f.Commit(); err != nil {
		return res, err
	}
	res.Split, res.Dir, res.OverviewBytes = true, dir, ws.Bytes
	idx := sp.index(filepath.Base(out))
	res.Index = idx
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return res, err
	}
	if err := outfile.WriteFile(filepath.Join(stage, "index.json"), append(b, '\n'), outfile.Options{Mode: outfile.Exclusive}); err != nil {
		return res, err
	}
	if exists {
		old := stage + ".old"
		if err := os.Rename(dir, old); err != nil {
			return res, err
		}
		defer os.RemoveAll(old)
	}
	if err := os.Rename(stage, dir); err != nil {
		return res, err
	}
	if ws.Bytes > so.MaxSize {
		return res, fmt.Errorf("the overview is %d bytes, over the bound of %d even with one bucket: too many tracks or markers", ws.Bytes, so.MaxSize)
	}
	return res, stopped
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// splitter is the state of a split export: the window being written, the
// finished ones and the overview.
type splitter struct {
	max, target int64
	stage       string
	ov          *overview
	f           *outfile.File // the current window's file
	aw          *asyncWriter  // writing to f
	cur         Window
	wins        []Window
	nsrc        int
	files       int
	srcs        []Source // as merged (the clocks files' markers included)
}

// create creates the next window's file.
func (sp *splitter) create() (io.Writer, error) {
	sp.files++
	name := fmt.Sprintf("%04d.pftrace", sp.files)
	f, err := outfile.Create(filepath.Join(sp.stage, name), outfile.Options{Mode: outfile.Exclusive})
	if err != nil {
		return nil, err
	}
	sp.f = f
	sp.aw = newAsyncWriter(f)
	sp.cur = Window{File: name, PerInput: make([]int64, sp.nsrc)}
	return sp.aw, nil
}

func (sp *splitter) begin(srcs []Source) {
	sp.srcs = srcs
	sp.nsrc = len(srcs)
	sp.cur.PerInput = make([]int64, len(srcs))
}

// maybeRotate starts a new window at ts when the current one is full. It
// is called before the first event at ts is drawn.
func (sp *splitter) maybeRotate(w *Writer, ts uint64) error {
	if w.FileBytes() < sp.target || sp.cur.Events == 0 {
		return nil
	}
	old, oldAW := sp.f, sp.aw
	prev := sp.cur
	next, err := sp.create()
	if err != nil {
		return err
	}
	if err := w.Rotate(next, ts); err != nil {
		return err
	}
	if err := oldAW.Close(); err != nil {
		return err
	}
	if err := old.Commit(); err != nil {
		return err
	}
	prev.EndNS = ts
	prev.Bytes = old.Written()
	prev.Top = sp.ov.windowTop(5)
	sp.wins = append(sp.wins, prev)
	sp.cur.StartNS = ts
	return nil
}

// end ends the last window after the event at last.
func (sp *splitter) end(last uint64) {
	sp.cur.EndNS = last + 1
	if len(sp.wins) == 0 {
		sp.cur.StartNS = sp.ov.start
	}
}

// closeFile commits the last window's file (the Writer was closed).
func (sp *splitter) closeFile() error {
	f := sp.f
	sp.f = nil
	if err := sp.aw.Close(); err != nil {
		f.Abort()
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	sp.cur.Bytes = f.Written()
	sp.cur.Top = sp.ov.windowTop(5)
	sp.wins = append(sp.wins, sp.cur)
	if sp.wins[0].StartNS == 0 {
		sp.wins[0].StartNS = sp.ov.start
	}
	return nil
}

func (sp *splitter) lost(oi *ovInput, ts, n uint64) {
	sp.cur.Lost += n
	if oi != nil {
		sp.ov.lostAt(oi, ts, n)
	}
}

func (sp *splitter) overviewWindows(dir string) []ovWindow {
	ws := make([]ovWindow, len(sp.wins))
	for i, w := range sp.wins {
		ws[i] = ovWindow{file: dir + "/" + w.File, start: w.StartNS, end: w.EndNS, events: w.Events, bytes: w.Bytes}
	}
	return ws
}

func (sp *splitter) index(overview string) *Index {
	idx := &Index{Version: IndexVersion, Overview: overview, MaxSize: sp.max,
		BucketNS: sp.ov.width, Buckets: sp.ov.nb, StartNS: sp.ov.start, Windows: sp.wins}
	if n := len(sp.wins); n > 0 {
		idx.EndNS = sp.wins[n-1].EndNS
	}
	for _, s := range sp.srcs {
		in := s.Info()
		idx.Inputs = append(idx.Inputs, IndexInput{Path: in.shown(), Stream: in.Stream, Kind: in.Kind,
			Events: in.Events, Lost: in.Lost + in.Dropped, Skipped: in.Skipped, Truncated: in.Truncated})
	}
	return idx
}

var _ io.Writer = (*countWriter)(nil)

// asyncWriter writes to w in another goroutine, so that the write system
// calls of a window file overlap the encoding of the next events. Write
// copies p; a write error is returned by Close (and by the Write after
// it was seen).
type asyncWriter struct {
	w    io.Writer
	ch   chan []byte
	free chan []byte
	done chan error
	err  error
	fail chan error
}

func newAsyncWriter(w io.Writer) *asyncWriter {
	const n = 4
	a := &asyncWriter{w: w, ch: make(chan []byte, n), free: make(chan []byte, n), done: make(chan error, 1), fail: make(chan error, 1)}
	for i := 0; i < n; i++ {
		a.free <- make([]byte, 0, 256<<10)
	}
	go func() {
		var err error
		for b := range a.ch {
			if err == nil {
				if _, err = a.w.Write(b); err != nil {
					a.fail <- err
				}
			}
			a.free <- b
		}
		a.done <- err
	}()
	return a
}

func (a *asyncWriter) Write(p []byte) (int, error) {
	if a.err == nil {
		select {
		case a.err = <-a.fail:
		default:
		}
	}
	if a.err != nil {
		return 0, a.err
	}
	b := <-a.free
	a.ch <- append(b[:0], p...)
	return len(p), nil
}

// Close waits for the writes and returns the first error.
func (a *asyncWriter) Close() error {
	close(a.ch)
	err := <-a.done
	if a.err != nil {
		return a.err
	}
	return err
}
