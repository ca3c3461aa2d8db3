package cut

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/internal/timerange"
)

// Windowed is a trace (or a directory of traces) restricted to a time
// window by OpenWindow: Path reads like the input, holding only the
// window. Close removes what OpenWindow wrote.
type Windowed struct {
	// Path is the cut of the input (the input itself when the window is
	// unset): a file named like the input (without a compression suffix),
	// or a directory like the input directory, in a private temporary
	// directory.
	Path string
	// Results are the cuts made, one per trace, in the order written.
	Results []WindowedTrace
	tmp     string
	input   string // the path OpenWindow was given
	ptDir   bool   // Path is a buffer of a mirrored PT capture directory
	// specFor is the window of each trace of a directory whose
	// clocks.json places mark: ends on the capture's clock (CommonSpec)
	specFor func(path string) timerange.Spec
}

// WindowedTrace is one trace cut by OpenWindow.
type WindowedTrace struct {
	Input  string // the trace's path
	Path   string // its cut
	Result *Result
}

// Lost is the sum of the loss the cuts record (Result.Lost): what a
// reader of the cut counts again from its records, plus a half record
// the input ended with (Result.Truncated), which the cut leaves out.
func (w *Windowed) Lost() uint64 {
	var n uint64
	for _, r := range w.Results {
		n += r.Result.Lost
	}
	return n
}

// Truncated lists the traces that end inside a record: the cut leaves
// the half record out, so a reader of the cut does not see that loss.
func (w *Windowed) Truncated() []WindowedTrace {
	var t []WindowedTrace
	for _, r := range w.Results {
		if r.Result.Truncated > 0 {
			t = append(t, r)
		}
	}
	return t
}

// Input is the path of the input that path, a file of the window's
// copy (Path or a file under it), stands for: the trace it cuts (named
// with its compression suffix, which the cut drops) or the file it links.
func (w *Windowed) Input(path string) string {
	for _, r := range w.Results {
		if r.Path == path {
			return r.Input
		}
	}
	if w.tmp == "" {
		return path
	}
	root, input := w.Path, w.input
	if w.ptDir {
		root, input = filepath.Dir(root), filepath.Dir(input)
	}
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.Join(input, rel)
	}
	return path
}

// Close removes the cut files.
func (w *Windowed) Close() error {
	if w == nil || w.tmp == "" {
		return nil
	}
	return os.RemoveAll(w.tmp)
}

// OpenWindow restricts the trace at path to the window spec for a reader
// that takes a path: it cuts the trace (Cut, seeking with its index
// INPUT.iotapidx when it has a valid one) into a file of the same format
// in a private temporary directory and returns it. A raw Intel PT buffer
// of an 'iotap pt capture' directory, and any directory, are mirrored:
// the new directory holds the cut of every trace of the directory and of
// its subdirectories (each on its own clock; when the directory has a
// clocks.json, mark:NAME and seconds from the start are placed on the
// capture's common clock, see CommonSpec, else relative ends count from
// each trace's first record; a trace
// the window does not resolve on, such as one without the mark:NAME
// marker, is left out with a warning) and
// links to its other files, so
// capture.json, images and clocks.json are found next to the cut as next
// to the original (indexes are left out: they index the originals).
//
// An unset spec returns path itself. Standard input ("-") cannot be cut
// (a cut reads its input more than once). warn receives what is wrong
// with an index, a trace that ends inside a record, and a file of a
// directory that is a trace cut cannot write (perf.data), which is
// linked whole.
func OpenWindow(ctx context.Context, path string, spec timerange.Spec, warn func(string)) (*Windowed, error) {
	if !spec.Set() {
		return &Windowed{Path: path}, nil
	}
	if warn == nil {
		warn = func(string) {}
	}
	if path == "-" || path == "" {
		return nil, errors.New("--from/--to: standard input is read once, a window is cut from a file: give the file (or cut it with 'iotap cut' first)")
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, detect.ReadError(path, err)
	}
	tmp, err := os.MkdirTemp("", "iotap-window-")
	if err != nil {
		return nil, err
	}
	w := &Windowed{tmp: tmp, input: path}
	fail := func(err error) (*Windowed, error) {
		w.Close()
		return nil, inputError(path, err)
	}
	if st.IsDir() {
		if w.specFor, err = CommonSpec(ctx, path, spec); err != nil {
			return fail(err)
		}
		dst := filepath.Join(tmp, filepath.Base(filepath.Clean(path)))
		if err := w.mirror(ctx, path, dst, "", spec, warn); err != nil {
			return fail(err)
		}
		w.Path = dst
		return w, nil
	}
	if in, closer, err := OpenFile(path, false, nil); err == nil {
		pt := in.PT != nil
		closer.Close()
		if pt {
			// a buffer of a PT capture directory: the directory, with
			// this buffer cut and the others linked
			dir := filepath.Join(tmp, filepath.Base(filepath.Dir(path)))
			if err := w.mirror(ctx, filepath.Dir(path), dir, filepath.Base(path), spec, warn); err != nil {
				return fail(err)
			}
			w.Path, w.ptDir = filepath.Join(dir, filepath.Base(path)), true
			return w, nil
		}
	}
	dst := filepath.Join(tmp, cutName(filepath.Base(path)))
	if err := w.cutTo(ctx, path, dst, spec, warn); err != nil {
		return fail(err)
	}
	w.Path = dst
	return w, nil
}

// cutName is the name of the cut of a file: a compressed input is cut
// into its decompressed format.
func cutName(name string) string {
	for _, ext := range []string{".gz", ".xz", ".zst", ".zstd"} {
		if s, ok := strings.CutSuffix(name, ext); ok && s != "" {
			return s
		}
	}
	return name
}

// cutTo cuts the trace at src into dst.
func (w *Windowed) cutTo(ctx context.Context, src, dst string, spec timerange.Spec, warn func(string)) error {
	if w.specFor != nil {
		spec = w.specFor(src)
	}
	in, closer, err := OpenFile(src, true, warn)
	if err != nil {
		return err
	}
	defer closer.Close()
	f, err := outfile.Create(dst, outfile.Options{})
	if err != nil {
		return err
	}
	defer f.Abort()
	res, err := Cut(ctx, in, f, Options{Window: spec, Warn: warn})
	if err != nil {
		return err // a *WindowError names src: Cut names its input
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if msg := res.pastEnd(src, spec); msg != "" {
		warn(msg)
	}
	w.Results = append(w.Results, WindowedTrace{Input: src, Path: dst, Result: res})
	return nil
}

// mirror makes dst a directory like src: the traces cut (only the file
// named only, when only is set), the other files and directories linked.
func (w *Windowed) mirror(ctx context.Context, src, dst, only string, spec timerange.Spec, warn func(string)) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return err
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, IndexSuffix) {
			continue
		}
		from := filepath.Join(src, name)
		if only == "" && e.IsDir() {
			if err := w.mirror(ctx, from, filepath.Join(dst, name), "", spec, warn); err != nil {
				return err
			}
			continue
		}
		cutIt := only == name
		if only == "" && e.Type().IsRegular() {
			cutIt = isTrace(from, warn)
		}
		if cutIt {
			err := w.cutTo(ctx, from, filepath.Join(dst, cutName(name)), spec, warn)
			if we := (*WindowError)(nil); only == "" && err != nil && !errors.As(err, &we) && isPerfData(from) {
				// a perf.data without Intel PT (user events...): read whole
				warn(fmt.Sprintf("%s: not cut to the window, read whole: %v", from, err))
				if err := os.Symlink(filepath.Join(abs, name), filepath.Join(dst, name)); err != nil {
					return err
				}
				continue
			}
			if we := (*WindowError)(nil); only == "" && errors.As(err, &we) {
				// one trace of a directory the window does not apply to
				// (a marker it does not hold): left out, said
				warn(fmt.Sprintf("%v: left out of the window's copy of %s", err, src))
				continue
			}
			if err != nil {
				return err
			}
			continue
		}
		if err := os.Symlink(filepath.Join(abs, name), filepath.Join(dst, name)); err != nil {
			return err
		}
	}
	return nil
}

// isTrace says whether the file at path is a trace Cut writes; a trace it
// cannot write (perf.data) is reported to warn.
func isTrace(path string, warn func(string)) bool {
	f, err := detect.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head, complete, _, err := detect.ReadHead(f)
	if err != nil {
		return false
	}
	res, err := detect.Head(head, complete)
	if err != nil || res.Kind == "" {
		return false
	}
	if _, err := Sniff(head, complete); err != nil {
		if res.Kind == detect.PT && bytes.HasPrefix(head, []byte("PERFILE2")) {
			return true // Intel PT in perf.data: CutPerfDataPT
		}
		warn(fmt.Sprintf("%s: not cut to the window, read whole: %v", path, err))
		return false
	}
	return true
}

// isPerfData says whether the file at path starts with perf.data's magic.
func isPerfData(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 8)
	_, err = io.ReadFull(f, b)
	return err == nil && string(b) == "PERFILE2"
}

// inputError is err of a window cut of the trace at path, as a reader
// reports it: naming the trace, without the "cut: " of Cut's own
// messages (the reader puts its own name first). It unwraps to err.
func inputError(path string, err error) error {
	if err == nil {
		return nil
	}
	if we := (*WindowError)(nil); errors.As(err, &we) {
		return err // named once, where it was made
	}
	msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "cut: "), ": cut: ", ": ")
	if !strings.Contains(msg, path) {
		msg = path + ": " + msg
	}
	return &namedError{msg, err}
}

type namedError struct {
	msg string
	err error
}

func (e *namedError) Error() string { return e.msg }
func (e *namedError) Unwrap() error { return e.err }

// Windows are the windows of a reader's inputs, cut by Open.
type Windows struct {
	list []*Windowed
}

// Open cuts the window spec of the trace (or directory) at path
// (OpenWindow) and returns the cut's path.
func (ws *Windows) Open(ctx context.Context, path string, spec timerange.Spec, warn func(string)) (string, error) {
	w, err := OpenWindow(ctx, path, spec, warn)
	if err != nil {
		return "", err
	}
	ws.list = append(ws.list, w)
	return w.Path, nil
}

// Renamer names the inputs of the windows (NewRenamer).
func (ws *Windows) Renamer() *Renamer { return NewRenamer(ws.list...) }

// Truncated says what a reader of the cuts does not see: the first trace
// that ends inside a record, whose half record the cut leaves out; ""
// when none does.
func (ws *Windows) Truncated() string {
	for _, w := range ws.list {
		for _, t := range w.Truncated() {
			return fmt.Sprintf("%s ends inside a record (offset %d): the window's cut leaves it out, 1 event lost", t.Input, t.Result.TruncatedAt)
		}
	}
	return ""
}

// Close removes the cuts.
func (ws *Windows) Close() {
	for _, w := range ws.list {
		w.Close()
	}
}

// OpenAll cuts the window spec of each of paths (Open) and returns the
// cuts' paths in a new slice; the first path that does not cut ends it
// with its error.
func (ws *Windows) OpenAll(ctx context.Context, paths []string, spec timerange.Spec, warn func(string)) ([]string, error) {
	cuts := make([]string, len(paths))
	for i, p := range paths {
		c, err := ws.Open(ctx, p, spec, warn)
		if err != nil {
			return nil, err
		}
		cuts[i] = c
	}
	return cuts, nil
}

// Run runs read, a reader of the cuts, with stdout and stderr wrapped so
// that what it prints names the inputs, not their cuts (Renamer; the
// writers are flushed when read returns), and so that a write to a
// closed pipe removes the cuts and calls broken (BrokenPipe). It returns
// read's error renamed too.
func (ws *Windows) Run(stdout, stderr io.Writer, broken func(), read func(stdout, stderr io.Writer) error) error {
	rn := ws.Renamer()
	o, e := rn.Writer(ws.BrokenPipe(stdout, broken)), rn.Writer(ws.BrokenPipe(stderr, broken))
	err := read(o, e)
	o.Flush()
	e.Flush()
	return rn.Error(err)
}
