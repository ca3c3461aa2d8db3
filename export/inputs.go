package export

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	capdir "github.com/iotap/iotap/capture"
	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/internal/compress"
	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

type inputFile struct {
	path string
	kind detect.Kind
	res  detect.Result
	size int64
	mod  time.Time
	// window is Options.Window placed for this file (cut.CommonSpec)
	window func(path string) timerange.Spec
}

// ExportPath exports one input: a file, or a capture directory (iotap
// capture -o DIR: usb.pcapng, mmio.log[.zst], events.ndjson and
// clocks.json), whose files share one capture id. It returns the
// captures rows of the files exported; what was lost is in them (Loss,
// Complete), not in the error, which is for failures to read or write.
func (x *Exporter) ExportPath(ctx context.Context, path string) ([]CaptureRow, error) {
	p, err := x.planPath(path)
	if err != nil {
		return nil, err
	}
	return x.exportPlanned(ctx, p)
}

// exportPlanned exports the input p planned, its temporary files removed
// on an error.
func (x *Exporter) exportPlanned(ctx context.Context, p *pathPlan) ([]CaptureRow, error) {
	rows, err := x.exportPlan(ctx, p)
	if err != nil {
		x.dropTemps()
	}
	return rows, err
}

// pathPlan is an input of ExportPath as planPath found it, before any
// table is written: an 'iotap pt capture' directory, or the files to
// export (their kinds detected) and the clocks.json aligning them.
type pathPlan struct {
	path       string
	st         os.FileInfo
	ptDir      bool
	files      []inputFile
	clocksPath string
}

// planPath finds the files of the input path and detects their kinds:
// every error of a file that is not exported (not a trace, of a kind not
// exported, not a regular file) comes from here, before anything is
// written.
func (x *Exporter) planPath(path string) (*pathPlan, error) {
	if path == "-" {
		return nil, errors.New("export: standard input cannot be exported: export reads its input more than once (give a file)")
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if !st.IsDir() && !st.Mode().IsRegular() {
		// A pipe would lose what the first reads took: its kind, the
		// capture id of its first 64 KiB, then its records.
		return nil, fmt.Errorf("export: %s is not a regular file: export reads its input more than once", path)
	}
	var files []inputFile
	var clocksPath string
	if st.IsDir() && fileExists(filepath.Join(path, intelpt.CaptureInfoFile)) {
		if x.opt.Window.Set() {
			return nil, fmt.Errorf("export: %s: Intel PT inputs are not exported by window: cut it first ('iotap cut --from ... --to ... %s/cpuN.pt -o CUT') and export the cut", path, path)
		}
		return &pathPlan{path: path, st: st, ptDir: true}, nil
	}
	if st.IsDir() {
		// The files report reads of the directory (detect.DirFiles).
		paths, err := detect.DirFiles(path, false)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		for _, p := range paths {
			if p == filepath.Join(path, "clocks.json") {
				clocksPath = p
				continue
			}
			in, err := x.probe(p)
			if errors.Is(err, detect.ErrNotTrace) || (err == nil && !exported(in.kind)) {
				// Not a trace, or one of a kind not exported (yet):
				// the other files of the capture are.
				continue
			}
			if err != nil {
				return nil, err
			}
			files = append(files, in)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("export: %s: no usbmon, mmiotrace, user_events or Intel PT file in the directory", path)
		}
		// A table's file is named by its input's base name (createFile):
		// two of one name in subdirectories would be one file.
		seen := map[string]string{}
		for _, in := range files {
			if other, ok := seen[filepath.Base(in.path)]; ok {
				return nil, fmt.Errorf("export: %s and %s have the same name, which names their tables' files: export them one by one", other, in.path)
			}
			seen[filepath.Base(in.path)] = in.path
		}
	} else {
		in, err := x.probe(path)
		if err != nil {
			return nil, err
		}
		if !exported(in.kind) {
			return nil, fmt.Errorf("export: %s: %s is not exported (usbmon, mmiotrace, user_events and Intel PT inputs are)", path, in.res)
		}
		files = append(files, in)
		if p := filepath.Join(filepath.Dir(path), "clocks.json"); fileExists(p) {
			clocksPath = p
		}
	}
	return &pathPlan{path: path, st: st, files: files, clocksPath: clocksPath}, nil
}

// exportPlan exports the input p planned (planPath).
func (x *Exporter) exportPlan(ctx context.Context, p *pathPlan) ([]CaptureRow, error) {
	if p.ptDir {
		return x.exportPTDir(ctx, p.path)
	}
	path, st, files, clocksPath := p.path, p.st, p.files, p.clocksPath
	c, err := x.captureOf(path, files)
	if err != nil {
		return nil, err
	}
	if clocksPath != "" {
		if err := c.loadClocks(clocksPath); err != nil {
			return nil, err
		}
	}
	// What the capture itself counted as lost (capture.LossFile), for a
	// capture directory or a file of one.
	capDir := path
	if !st.IsDir() {
		capDir = filepath.Dir(path)
	}
	if c.losses, err = capdir.ReadLoss(capDir); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	var window func(string) timerange.Spec
	if st.IsDir() && x.opt.Window.Set() {
		// mark: on the capture's common clock (clocks.json)
		if window, err = cut.CommonSpec(ctx, path, x.opt.Window); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
	}
	var rows []CaptureRow
	for _, in := range files {
		in.window = window
		row, err := x.exportFile(ctx, c, in)
		if we := (*cut.WindowError)(nil); st.IsDir() && errors.As(err, &we) {
			// a file of the capture the window does not apply to
			if x.opt.Warn != nil {
				x.opt.Warn(fmt.Sprintf("%v: left out of the export", err))
			}
			continue
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
	if st.IsDir() {
		// A source that lost events but left no trace to export (its
		// file empty or missing) still gets its captures row.
		for _, l := range c.losses {
			if !slices.ContainsFunc(rows, func(r CaptureRow) bool { return r.Source == l.Source }) {
				row := x.newRow(c, inputFile{path: path})
				row.Source, row.Compression = l.Source, ""
				c.applyLoss(&row)
				x.captures = append(x.captures, row)
				rows = append(rows, row)
			}
		}
	}
	return rows, nil
}

// Unrecorded lists what the export of a capture directory found lost
// beyond what the capture itself counted (recorded: the capture's
// Result.Lost, also in its loss.json), as 'iotap capture --parquet'
// reports it: a source the capture counted a loss for is left out (its
// row repeats that loss), each other row with a loss is "FILE: LOSS
// (recorded in the captures table)".
func Unrecorded(rows []CaptureRow, recorded []capdir.SourceLoss) (loss []string) {
	for _, r := range rows {
		if r.Loss != "" && !slices.ContainsFunc(recorded, func(l capdir.SourceLoss) bool { return l.Source == r.Source }) {
			loss = append(loss, r.namedLoss()+" (recorded in the captures table)")
		}
	}
	return loss
}

// applyLoss adds to row what the capture recorded as lost by its source:
// its count, when larger than the trace's own, and its words.
func (c *capture) applyLoss(row *CaptureRow) {
	for _, l := range c.losses {
		if l.Source != row.Source {
			continue
		}
		row.LostEvents = max(row.LostEvents, int64(l.Lost))
		text := "recorded by the capture: " + l.Text
		if row.Loss != "" {
			text = row.Loss + "; " + text
		}
		row.Loss = text
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// exported tells whether inputs of kind k are exported.
func exported(k detect.Kind) bool {
	return k == detect.USB || k == detect.MMIO || k == detect.Events || k == detect.PT
}

// exportPTDir exports an 'iotap pt capture' directory: one input.
func (x *Exporter) exportPTDir(ctx context.Context, dir string) ([]CaptureRow, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	t, err := readPTDir(dir)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	in := inputFile{path: dir, kind: detect.PT, mod: st.ModTime()}
	var files []inputFile
	for _, name := range t.names {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		in.size += fi.Size()
		files = append(files, inputFile{path: p, kind: detect.PT, size: fi.Size(), mod: fi.ModTime()})
	}
	c, err := x.captureOf(dir, files)
	if err != nil {
		return nil, err
	}
	row := x.newRow(c, in)
	if err := x.exportPT(ctx, c, dir, t, &row); err != nil {
		return nil, err
	}
	x.captures = append(x.captures, row)
	return []CaptureRow{row}, nil
}

// probe recognises the trace in a file with package detect, the one
// detection every command uses. A file that is no trace is an error
// matching detect.ErrNotTrace.
func (x *Exporter) probe(path string) (inputFile, error) {
	f, err := detect.Open(path)
	if err != nil {
		return inputFile{}, fmt.Errorf("export: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return inputFile{}, fmt.Errorf("export: %w", err)
	}
	head, complete, _, err := detect.ReadHead(f)
	if err != nil {
		return inputFile{}, fmt.Errorf("export: %w", detect.ReadError(path, err))
	}
	res, err := detect.Recognise(head, complete) // a perf.data of tracepoints is Events
	if err != nil {
		return inputFile{}, fmt.Errorf("export: %s: %w", path, err)
	}
	// Only a trace is an input an output must not replace: a directory's
	// other files (an earlier export's tables in it) are not read.
	x.inputs = append(x.inputs, st)
	return inputFile{path: path, kind: res.Kind, res: res, size: st.Size(), mod: st.ModTime()}, nil
}

// captureOf makes the capture identity of files: the id hashes their
// names, sizes and first 64 KiB; the date is the day of the first
// wall-clock USB event, else of the oldest file's modification time.
func (x *Exporter) captureOf(path string, files []inputFile) (*capture, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", filepath.Base(filepath.Clean(path)))
	var date time.Time
	for _, in := range files {
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.Base(in.path), in.size)
		f, err := os.Open(in.path)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		io.Copy(h, io.LimitReader(f, 64<<10))
		if in.kind == detect.USB && date.IsZero() {
			f.Seek(0, io.SeekStart)
			if rd, _, err := usbmon.NewReader(bufio.NewReader(f)); err == nil {
				var ev usbmon.Event
				if rd.ReadInto(&ev) == nil && ev.Fields&usbmon.HasWallClock != 0 {
					date = time.UnixMicro(usb.Micros(&ev))
				}
			}
		}
		f.Close()
	}
	if date.IsZero() {
		for _, in := range files {
			if date.IsZero() || in.mod.Before(date) {
				date = in.mod
			}
		}
	}
	return x.newCapture(h.Sum(nil), dayOf(date)), nil
}

// clocksFile is the part of clocks.json (timeline.Clocks) export reads.
type clocksFile struct {
	Common  string `json:"common"`
	Sources map[string]struct {
		OffsetNS int64 `json:"offset_ns"`
	} `json:"sources"`
}

func (c *capture) loadClocks(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	var cf clocksFile
	if err := json.Unmarshal(b, &cf); err != nil {
		return fmt.Errorf("export: %s: %v", path, err)
	}
	c.commonClock = cf.Common
	c.offsets = map[string]int64{}
	for k, v := range cf.Sources {
		c.offsets[k] = v.OffsetNS
	}
	return nil
}

// open opens the input in: the file, or its window (Options.Window) cut
// in-process, which is decompressed (in.res.Compression is cleared).
func (x *Exporter) open(ctx context.Context, in *inputFile) (io.ReadCloser, error) {
	if !x.opt.Window.Set() {
		f, err := os.Open(in.path)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		return f, nil
	}
	spec := x.opt.Window
	if in.window != nil {
		spec = in.window(in.path)
	}
	s, err := cut.OpenStream(ctx, in.path, spec, x.opt.Warn)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	in.res.Compression = ""
	return s, nil
}

// windowLoss adds to row what the window's cut of its input counted and
// its reader did not: a half record the input ends with.
func windowLoss(f io.Reader, row *CaptureRow) error {
	s, ok := f.(*cut.Stream)
	if !ok {
		return nil
	}
	if r := s.Result(); r != nil && r.Truncated > 0 {
		row.LostEvents++
		row.Complete = false
		msg := fmt.Sprintf("the input ends inside a record (offset %d), left out of the window", r.TruncatedAt)
		if row.Loss != "" {
			msg = row.Loss + "; " + msg
		}
		row.Loss = msg
	}
	return nil
}

// input returns f, the opened input in, through Options.Input when set.
func (x *Exporter) input(in inputFile, f io.Reader) io.Reader {
	if x.opt.Input == nil {
		return f
	}
	return x.opt.Input(in.path, in.size, f)
}

// newRow starts the captures row of input in.
func (x *Exporter) newRow(c *capture, in inputFile) CaptureRow {
	row := CaptureRow{Identity: c.id, InputBytes: in.size, CaptureDate: c.date, Complete: true,
		ExportedAt: x.opt.Now().UnixMicro(), SchemaVersion: SchemaVersion, IotapVersion: cmpOr(x.opt.IotapVersion, "devel"),
		CommonClock: c.commonClock, Compression: cmpOr(in.res.Compression, "none")}
	row.SourceFile = in.path
	return row
}

func (x *Exporter) exportFile(ctx context.Context, c *capture, in inputFile) (CaptureRow, error) {
	row := x.newRow(c, in)
	var err error
	if in.kind == detect.PT && x.opt.Window.Set() {
		return row, fmt.Errorf("export: %s: Intel PT inputs are not exported by window: cut it first ('iotap cut --from ... --to ... %s -o CUT') and export the cut", in.path, in.path)
	}
	switch {
	case in.kind == detect.Events && in.res.Format == "perf.data":
		spec := x.opt.Window
		if in.window != nil && spec.Set() {
			spec = in.window(in.path)
		}
		err = x.exportPerfDataEvents(ctx, c, in.path, spec, &row)
	case in.kind == detect.PT:
		var f *os.File
		f, err = os.Open(in.path)
		if err != nil {
			return row, fmt.Errorf("export: %w", err)
		}
		var t *ptTrace
		t, err = x.readPT(in, f)
		if err == nil {
			err = x.exportPT(ctx, c, in.path, t, &row)
			t.Close()
		}
		f.Close()
	case in.kind == detect.MMIO:
		// Streamed, not mapped (mmiotrace.Open): a mapped file's pages
		// count in the resident size, which must stay flat.
		var f io.ReadCloser
		f, err = x.open(ctx, &in)
		if err != nil {
			return row, err
		}
		rd := mmiotrace.NewReader(x.input(in, f))
		err = x.exportMMIO(ctx, c, in.path, rd, &row)
		rd.Close()
		f.Close()
		if err == nil {
			err = windowLoss(f, &row)
		}
	default:
		var f io.ReadCloser
		f, err = x.open(ctx, &in)
		if err != nil {
			return row, err
		}
		br := bufio.NewReaderSize(x.input(in, f), 256<<10)
		if in.kind == detect.USB {
			// usbmon.NewReader decompresses by itself.
			err = x.exportUSB(ctx, c, in.path, br, &row)
		} else {
			var r io.Reader = br
			closeDec := func() {}
			if in.res.Compression != "" {
				r, _, closeDec, err = compress.Decompress(br)
			}
			if err == nil {
				err = x.exportEvents(ctx, c, in.path, r, &row)
			} else {
				err = fmt.Errorf("export: %s: %w", in.path, err)
			}
			closeDec()
		}
		f.Close()
		if err == nil {
			err = windowLoss(f, &row)
		}
	}
	if err != nil {
		return row, err
	}
	c.applyLoss(&row)
	if off, ok := c.offsets[filepath.Base(in.path)]; ok {
		row.CommonOffset = ptr(off)
	} else if off, ok := c.offsets[row.Source]; ok {
		row.CommonOffset = ptr(off)
	}
	x.captures = append(x.captures, row)
	return row, nil
}
