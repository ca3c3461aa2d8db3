package cut

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"sort"
	"strings"
)

// Renamer names the inputs of windows (OpenWindow) where a reader of
// the cut names the cut: a message or an NDJSON "file" field that says
// /tmp/iotap-window-123/e1000.log says e1000.log, the user's input.
type Renamer struct {
	old, new []string // longest old first; raw and JSON-escaped forms
}

// NewRenamer maps the cuts of ws back to their inputs.
func NewRenamer(ws ...*Windowed) *Renamer {
	type pair struct{ old, new string }
	var ps []pair
	add := func(old, new string) {
		ps = append(ps, pair{old, new})
		if jo, jn := jsonInner(old), jsonInner(new); jo != old || jn != new {
			ps = append(ps, pair{jo, jn})
		}
	}
	for _, w := range ws {
		if w == nil || w.tmp == "" {
			continue
		}
		add(w.Path, w.input)
		if w.ptDir {
			add(filepath.Dir(w.Path), filepath.Dir(w.input))
		}
	}
	sort.SliceStable(ps, func(i, j int) bool { return len(ps[i].old) > len(ps[j].old) })
	r := &Renamer{}
	for _, p := range ps {
		r.old, r.new = append(r.old, p.old), append(r.new, p.new)
	}
	return r
}

// jsonInner is s as a JSON string holds it, without the quotes.
func jsonInner(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// String names the inputs in s.
func (r *Renamer) String(s string) string {
	for i, o := range r.old {
		s = strings.ReplaceAll(s, o, r.new[i])
	}
	return s
}

func (r *Renamer) bytes(b []byte) []byte {
	for i, o := range r.old {
		if bytes.Contains(b, []byte(o)) {
			b = bytes.ReplaceAll(b, []byte(o), []byte(r.new[i]))
		}
	}
	return b
}

// Error is err with its message renamed; it unwraps to err.
func (r *Renamer) Error(err error) error {
	if err == nil || len(r.old) == 0 {
		return err
	}
	if msg := r.String(err.Error()); msg != err.Error() {
		return &namedError{msg, err}
	}
	return err
}

// Writer returns a writer that renames what is written through it to w,
// a line at a time (a line is held until its end, at most 1 MiB). Flush
// it at the end.
func (r *Renamer) Writer(w io.Writer) *RenameWriter {
	return &RenameWriter{r: r, w: w}
}

// RenameWriter is Renamer.Writer.
type RenameWriter struct {
	r   *Renamer
	w   io.Writer
	buf []byte
}

func (rw *RenameWriter) Write(p []byte) (int, error) {
	if len(rw.r.old) == 0 {
		return rw.w.Write(p)
	}
	total := len(p)
	n := bytes.LastIndexByte(p, '\n') + 1
	if n == 0 && len(rw.buf)+len(p) < 1<<20 {
		rw.buf = append(rw.buf, p...)
		return len(p), nil
	}
	if n == 0 {
		n = len(p)
	}
	// the held line's end, then whole lines straight from p
	if len(rw.buf) > 0 {
		i := bytes.IndexByte(p, '\n') + 1
		if i == 0 {
			i = n
		}
		rw.buf = append(rw.buf, p[:i]...)
		if err := rw.Flush(); err != nil {
			return 0, err
		}
		p, n = p[i:], n-i
	}
	if n > 0 {
		if _, err := rw.w.Write(rw.r.bytes(p[:n])); err != nil {
			return 0, err
		}
	}
	rw.buf = append(rw.buf, p[n:]...)
	return total, nil
}

// Flush writes what is held.
func (rw *RenameWriter) Flush() error {
	if len(rw.buf) == 0 {
		return nil
	}
	_, err := rw.w.Write(rw.r.bytes(rw.buf))
	rw.buf = rw.buf[:0]
	return err
}
