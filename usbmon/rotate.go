package usbmon

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/iotap/iotap/rotate"
)

// Rotator is a [Writer] that writes to a ring of files ([rotate.Files]),
// as tshark -b does: a new file is started before the event that comes
// once the current file holds opt.Size bytes (the encoder's unflushed
// bytes included) or is opt.Duration old. Each file is complete on its
// own: its format's header, then whole events; an event is never split
// between files.
type Rotator struct {
	files     *rotate.Files
	newWriter func(io.Writer) (Writer, error)
	w         Writer
	loss      Loss // of the closed files
}

// NewRotator starts the first file of the ring opt; newWriter starts the
// encoder of each file (its header first).
func NewRotator(opt rotate.Options, newWriter func(w io.Writer) (Writer, error)) (*Rotator, error) {
	if err := opt.Check(); err != nil {
		return nil, fmt.Errorf("usbmon: %w", err)
	}
	files, err := rotate.NewFiles(opt)
	if err != nil {
		return nil, err
	}
	r := &Rotator{files: files, newWriter: newWriter}
	if err := r.next(); err != nil {
		return nil, err
	}
	return r, nil
}

// next completes the current file and starts the next one.
func (r *Rotator) next() error {
	if err := r.flushCurrent(); err != nil {
		return err
	}
	out, err := r.files.Next()
	if err != nil {
		return err
	}
	if r.w, err = r.newWriter(out); err != nil {
		return err
	}
	return r.w.Flush() // the header: every file reads on its own
}

// flushCurrent flushes the current file's encoder and keeps its loss.
func (r *Rotator) flushCurrent() error {
	if r.w == nil || !r.files.Open() {
		return nil
	}
	err := r.w.Flush()
	r.loss.merge(r.w.Loss())
	r.w = nil
	return err
}

func (r *Rotator) rotateIfDue() error {
	if !r.files.Open() {
		return errors.New("usbmon: write to a closed ring of files")
	}
	if !r.files.Due(r.buffered()) {
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
	if ng, ok := r.w.(*PcapngWriter); ok && r.files.Open() {
		return ng.WriteStats(t, dropped)
	}
	return nil
}

// Flush flushes the current file.
func (r *Rotator) Flush() error {
	if r.w == nil || !r.files.Open() {
		return nil
	}
	return r.w.Flush()
}

// Loss is what the format could not hold, over all files.
func (r *Rotator) Loss() Loss {
	l := r.loss
	if r.w != nil {
		l.merge(r.w.Loss())
	}
	return l
}

// Close flushes and closes the current file.
func (r *Rotator) Close() error {
	err := r.flushCurrent()
	if cerr := r.files.Close(); err == nil {
		err = cerr
	}
	return err
}

// Files returns the names of the files kept, oldest first.
func (r *Rotator) Files() []string { return r.files.Names() }

// Bytes held in the writers' buffers, counted towards the ring's size
// limit ([rotate.Files.Due]'s pending bytes).
func (p *PcapWriter) buffered() int   { return p.bw.Buffered() }
func (p *PcapngWriter) buffered() int { return p.bw.Buffered() }
func (w *TextWriter) buffered() int   { return w.w.Buffered() }

// buffered is what the current file's encoder holds, not yet written.
func (r *Rotator) buffered() int64 {
	if b, ok := r.w.(interface{ buffered() int }); ok {
		return int64(b.buffered())
	}
	return 0
}
