package rotate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Options configure a ring of files ([NewFiles]). A new file is due once
// the current one holds Size bytes or is Duration old; with Files > 0 only
// the newest Files files are kept (the oldest is removed when a new one
// starts).
type Options struct {
	// Path names the files: dir/name.ext gives dir/name_00001_20261127113000.ext,
	// dir/name_00002_..., numbered from 1 and stamped with the local time
	// the file was started, so that they sort in capture order (tshark's
	// names). A second extension of compression is kept: x.log.zst gives
	// x_00001_TIME.log.zst.
	Path     string
	Files    int           // files kept (0: all)
	Size     int64         // bytes per file (0: no limit)
	Duration time.Duration // time per file (0: no limit)
	// Create opens each file (nil: os.OpenFile, mode 0600, exclusive).
	// Its Close completes the file (iotap: commit the temporary file).
	Create func(path string) (io.WriteCloser, error)
	// OnFile, if set, is called with the name of each file once it is
	// complete (closed), and with removed=true when the ring removes it.
	OnFile func(path string, removed bool)
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// Enabled reports whether the options ask for more than one file.
func (o Options) Enabled() bool { return o.Size > 0 || o.Duration > 0 }

// Check validates the options as flags give them: a file name (not
// stdout) and no negative limit.
func (o Options) Check() error {
	if o.Path == "" || o.Path == "-" {
		return fmt.Errorf("rotate: a ring of files needs a file name, not %q", o.Path)
	}
	if o.Files < 0 || o.Size < 0 || o.Duration < 0 {
		return errors.New("rotate: ring of files: negative limit")
	}
	return nil
}

// FileName returns the name of file number n (from 1) started at t.
func (o Options) FileName(n int, t time.Time) string {
	dir, base := filepath.Split(o.Path)
	ext := filepath.Ext(base)
	switch ext {
	case ".gz", ".xz", ".zst":
		ext = filepath.Ext(strings.TrimSuffix(base, ext)) + ext
	}
	base = strings.TrimSuffix(base, ext)
	return fmt.Sprintf("%s%s_%05d_%s%s", dir, base, n, t.Format("20060102150405"), ext)
}

// Files is a ring of output files. The first file is started by the first
// [Files.Next].
type Files struct {
	opt     Options
	n       int // files started
	file    io.WriteCloser
	written int64
	started time.Time
	name    string
	names   []string // files kept, oldest first
}

// NewFiles checks opt and returns the ring, no file started yet.
func NewFiles(opt Options) (*Files, error) {
	if err := opt.Check(); err != nil {
		return nil, err
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Create == nil {
		opt.Create = func(p string) (io.WriteCloser, error) {
			return os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		}
	}
	return &Files{opt: opt}, nil
}

// Next closes the current file, starts the next one and removes the
// oldest beyond Options.Files. The writer it returns counts the bytes
// written to the file (see Due).
func (f *Files) Next() (io.Writer, error) {
	if err := f.Close(); err != nil {
		return nil, err
	}
	f.n++
	f.started = f.opt.Now()
	f.name = f.opt.FileName(f.n, f.started)
	file, err := f.opt.Create(f.name)
	if err != nil {
		return nil, err
	}
	f.file, f.written = file, 0
	f.names = append(f.names, f.name)
	for f.opt.Files > 0 && len(f.names) > f.opt.Files {
		old := f.names[0]
		f.names = f.names[1:]
		if err := os.Remove(old); err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if f.opt.OnFile != nil {
			f.opt.OnFile(old, true)
		}
	}
	return counter{f}, nil
}

type counter struct{ f *Files }

func (c counter) Write(p []byte) (int, error) {
	if c.f.file == nil {
		return 0, errors.New("rotate: write to a closed file")
	}
	n, err := c.f.file.Write(p)
	c.f.written += int64(n)
	return n, err
}

// Due reports whether the next record belongs in a new file: the current
// file, with pending bytes not yet written to it (an encoder's buffer),
// holds Size bytes, or is Duration old. A file that holds nothing is never
// due, so a file exceeds Size by less than one record. With no file
// started, Due is true.
func (f *Files) Due(pending int64) bool {
	if f.file == nil {
		return true
	}
	n := f.written + pending
	if n == 0 {
		return false
	}
	return f.opt.Size > 0 && n >= f.opt.Size ||
		f.opt.Duration > 0 && f.opt.Now().Sub(f.started) >= f.opt.Duration
}

// Open reports whether a file is started and not yet closed.
func (f *Files) Open() bool { return f.file != nil }

// Close closes the current file (it is complete); Next starts another.
func (f *Files) Close() error {
	if f.file == nil {
		return nil
	}
	err := f.file.Close()
	f.file = nil
	if err == nil && f.opt.OnFile != nil {
		f.opt.OnFile(f.name, false)
	}
	return err
}

// Names returns the names of the files kept, oldest first.
func (f *Files) Names() []string { return append([]string(nil), f.names...) }

// Started returns the number of files started so far (the number of the
// current file).
func (f *Files) Started() int { return f.n }

// ParseSize parses a size as the capture flags take it: bytes (1228800),
// or a number with K or M (1200K, 100M; binary units, either case), up to
// 1 GiB.
func ParseSize(s string) (int, error) {
	mul, num := 1, s
	switch {
	case strings.HasSuffix(s, "K"), strings.HasSuffix(s, "k"):
		mul, num = 1024, s[:len(s)-1]
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		mul, num = 1024*1024, s[:len(s)-1]
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || n > 1<<30/mul {
		return 0, fmt.Errorf("bad size %q (want bytes, or a number with K or M)", num)
	}
	return n * mul, nil
}
