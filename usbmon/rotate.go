package usbmon

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// RotateOptions configure a [Rotator]: a capture written to a ring of
// files, as tshark -b does. A new file is started before the event that
// comes once the current file holds Size bytes or is Duration old; with
// Files > 0 only the newest Files files are kept (the oldest is removed
// when a new one starts).
type RotateOptions struct {
	// Path names the files: dir/name.ext gives dir/name_00001_20261127113000.ext,
	// dir/name_00002_..., numbered from 1 and stamped with the local time
	// the file was started, so that they sort in capture order.
	Path     string
	Files    int           // files kept (0: all)
	Size     int64         // bytes per file (0: no limit)
	Duration time.Duration // time per file (0: no limit)
	// Create opens each file (iotap: mode 0600, exclusive, no symbolic
	// link); Commit-style closing is Close.
	Create func(path string) (io.WriteCloser, error)
	// NewWriter starts the encoder of a file (its header first).
	NewWriter func(w io.Writer) (Writer, error)
	// OnFile, if set, is called with the name of each file once it is
	// complete (closed), and with removed=true when the ring removes it.
	OnFile func(path string, removed bool)
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// Rotator is a [Writer] that writes to a ring of files ([RotateOptions]).
// Each file is complete on its own: its format's header, then whole
// events; an event is never split between files.
type Rotator struct {
	opt     RotateOptions
	n       int // files started
	file    io.WriteCloser
	count   *countingWriter
	w       Writer
	started time.Time
	name    string
	names   []string // files kept, oldest first
	loss    Loss     // of the closed files
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// NewRotator starts the first file.
func NewRotator(opt RotateOptions) (*Rotator, error) {
	if opt.Path == "" || opt.Path == "-" {
		return nil, fmt.Errorf("usbmon: a ring of files needs a file name, not %q", opt.Path)
	}
	if opt.Files < 0 || opt.Size < 0 || opt.Duration < 0 {
		return nil, fmt.Errorf("usbmon: ring of files: negative limit")
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Create == nil {
		opt.Create = func(p string) (io.WriteCloser, error) {
			return os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		}
	}
	r := &Rotator{opt: opt}
	if err := r.next(); err != nil {
		return nil, err
	}
	return r, nil
}

// FileName returns the name of file number n (from 1) started at t.
func (o RotateOptions) FileName(n int, t time.Time) string {
	ext := filepath.Ext(o.Path)
	base := strings.TrimSuffix(o.Path, ext)
	return fmt.Sprintf("%s_%05d_%s%s", base, n, t.Format("20060102150405"), ext)
}

// next closes the current file and starts the next one.
func (r *Rotator) next() error {
	if err := r.closeFile(); err != nil {
		return err
	}
	r.n++
	r.started = r.opt.Now()
	r.name = r.opt.FileName(r.n, r.started)
	f, err := r.opt.Create(r.name)
	if err != nil {
		return err
	}
	r.file, r.count = f, &countingWriter{w: f}
	w, err := r.opt.NewWriter(r.count)
	if err != nil {
		return err
	}
	r.w = w
	if err := w.Flush(); err != nil { // the header: every file reads on its own
		return err
	}
	r.names = append(r.names, r.name)
	for r.opt.Files > 0 && len(r.names) > r.opt.Files {
		old := r.names[0]
		r.names = r.names[1:]
		if err := os.Remove(old); err != nil && !os.IsNotExist(err) {
			return err
		}
		if r.opt.OnFile != nil {
			r.opt.OnFile(old, true)
		}
	}
	return nil
}

func (r *Rotator) closeFile() error {
	if r.file == nil {
		return nil
	}
	err := r.w.Flush()
	r.loss.merge(r.w.Loss())
	if cerr := r.file.Close(); err == nil {
		err = cerr
	}
	r.file = nil
	if err == nil && r.opt.OnFile != nil {
		r.opt.OnFile(r.name, false)
	}
	return err
}

// due reports whether the current file is full (buffered bytes
// included) or old enough: a file exceeds Size by less than one event.
func (r *Rotator) due() bool {
	if r.size() == 0 {
		return false
	}
	return r.opt.Size > 0 && r.size() >= r.opt.Size ||
		r.opt.Duration > 0 && r.opt.Now().Sub(r.started) >= r.opt.Duration
}

func (r *Rotator) rotateIfDue() error {
	if r.file == nil {
		return fmt.Errorf("usbmon: write to a closed ring of files")
	}
	if !r.due() {
		return nil
	}
	return r.next()
}

// Write writes ev to the current file, after starting a new one if the
// current one is due.
func (r *Rotator) Write(ev *Event) error {
	if err := r.rotateIfDue(); err != nil {
		return err
	}
	return r.w.Write(ev)
}

// WriteRecord writes a kernel record as is when the file's writer takes
// records (see Recording), else encodes ev.
func (r *Rotator) WriteRecord(ev *Event, rec []byte) error {
	if err := r.rotateIfDue(); err != nil {
		return err
	}
	if rw, ok := r.w.(interface {
		WriteRecord(*Event, []byte) error
	}); ok {
		return rw.WriteRecord(ev, rec)
	}
	return r.w.Write(ev)
}

// WriteStats writes interface statistics to the current file when it is
// pcapng (drops counted since the capture started).
func (r *Rotator) WriteStats(t time.Time, dropped uint64) error {
	if ng, ok := r.w.(*PcapngWriter); ok && r.file != nil {
		return ng.WriteStats(t, dropped)
	}
	return nil
}

// Flush flushes the current file.
func (r *Rotator) Flush() error {
	if r.file == nil {
		return nil
	}
	return r.w.Flush()
}

// Loss is what the format could not hold, over all files.
func (r *Rotator) Loss() Loss {
	l := r.loss
	if r.file != nil {
		l.merge(r.w.Loss())
	}
	return l
}

// Close flushes and closes the current file.
func (r *Rotator) Close() error { return r.closeFile() }

// Files returns the names of the files kept, oldest first.
func (r *Rotator) Files() []string { return append([]string(nil), r.names...) }

// Bytes held in the writers' buffers, for Rotator's size limit.
func (p *PcapWriter) buffered() int   { return p.bw.Buffered() }
func (p *PcapngWriter) buffered() int { return p.bw.Buffered() }
func (w *TextWriter) buffered() int   { return w.w.Buffered() }

// size is the current file's size once flushed.
func (r *Rotator) size() int64 {
	n := r.count.n
	if b, ok := r.w.(interface{ buffered() int }); ok {
		n += int64(b.buffered())
	}
	return n
}
