package tracefs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrBadPath is wrapped by errors for names that would leave the tracefs
// root or are otherwise not acceptable as a tracefs path component.
var ErrBadPath = errors.New("path outside tracefs")

// FS is a tracefs instance rooted at a directory.
type FS struct {
	root string
}

// New returns an FS rooted at dir (a tracefs mount, or a test directory).
func New(dir string) *FS { return &FS{root: filepath.Clean(dir)} }

// Root returns the directory FS is rooted at.
func (f *FS) Root() string { return f.root }

// Path joins elems below the root. Each element must be a relative path
// whose components are not empty, "." or ".."; anything else (an absolute
// path, a traversal, a NUL byte) is refused with ErrBadPath.
func (f *FS) Path(elems ...string) (string, error) {
	parts := []string{f.root}
	for _, e := range elems {
		if e == "" || strings.IndexByte(e, 0) >= 0 || filepath.IsAbs(e) {
			return "", fmt.Errorf("tracefs: %w: %q", ErrBadPath, e)
		}
		for _, c := range strings.Split(e, "/") {
			if c == "" || c == "." || c == ".." {
				return "", fmt.Errorf("tracefs: %w: %q", ErrBadPath, e)
			}
		}
		parts = append(parts, e)
	}
	return filepath.Join(parts...), nil
}

// ReadFile reads a file below the root.
func (f *FS) ReadFile(rel ...string) ([]byte, error) {
	p, err := f.Path(rel...)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// WriteFile writes data to an existing control file below the root (the
// file is never created). Kernel errors (EBUSY, EINVAL, …) are returned
// wrapped in *fs.PathError.
func (f *FS) WriteFile(data []byte, rel ...string) error {
	p, err := f.Path(rel...)
	if err != nil {
		return err
	}
	fd, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := fd.Write(data); err != nil {
		fd.Close()
		return err
	}
	return fd.Close()
}

// AvailableTracers lists the tracers this kernel offers.
func (f *FS) AvailableTracers() ([]string, error) {
	b, err := f.ReadFile("available_tracers")
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b)), nil
}

// HasTracer reports whether the kernel offers the named tracer.
func (f *FS) HasTracer(name string) (bool, error) {
	ts, err := f.AvailableTracers()
	if err != nil {
		return false, err
	}
	for _, t := range ts {
		if t == name {
			return true, nil
		}
	}
	return false, nil
}

// CurrentTracer returns the active tracer ("nop" when none).
func (f *FS) CurrentTracer() (string, error) {
	b, err := f.ReadFile("current_tracer")
	if err != nil {
		return "", err
	}
	return string(bytes.TrimSpace(b)), nil
}

// SetTracer activates the named tracer ("nop" stops tracing).
func (f *FS) SetTracer(name string) error {
	if name == "" || strings.ContainsAny(name, " \t\n/") {
		return fmt.Errorf("tracefs: bad tracer name %q", name)
	}
	if err := f.WriteFile([]byte(name), "current_tracer"); err != nil {
		return fmt.Errorf("tracefs: set tracer %s: %w", name, err)
	}
	return nil
}

// TracingOn reports whether the ring buffer records (tracing_on).
func (f *FS) TracingOn() (bool, error) {
	n, err := f.readInt("tracing_on")
	return n != 0, err
}

// SetTracingOn turns recording into the ring buffer on or off.
func (f *FS) SetTracingOn(on bool) error {
	v := "0"
	if on {
		v = "1"
	}
	return f.WriteFile([]byte(v), "tracing_on")
}

// OpenTracePipe opens trace_pipe for reading. Reads block until data is
// available and consume what they return.
func (f *FS) OpenTracePipe() (*os.File, error) {
	p, err := f.Path("trace_pipe")
	if err != nil {
		return nil, err
	}
	return os.Open(p)
}

// OpenMarker opens trace_marker for writing; each Write becomes one marker.
func (f *FS) OpenMarker() (*os.File, error) {
	p, err := f.Path("trace_marker")
	if err != nil {
		return nil, err
	}
	return os.OpenFile(p, os.O_WRONLY, 0)
}

// WriteMarker writes one message into the trace through trace_marker.
func (f *FS) WriteMarker(msg string) error {
	m, err := f.OpenMarker()
	if err != nil {
		return err
	}
	if _, err := m.Write([]byte(msg)); err != nil {
		m.Close()
		return fmt.Errorf("tracefs: write marker: %w", err)
	}
	return m.Close()
}

// BufferSizeKB returns the per-CPU ring buffer size in KiB.
func (f *FS) BufferSizeKB() (int, error) {
	b, err := f.ReadFile("buffer_size_kb")
	if err != nil {
		return 0, err
	}
	// "7 (expanded: 1408)" before the buffer is first used.
	s := strings.TrimSpace(string(b))
	if i := strings.Index(s, "(expanded: "); i >= 0 {
		s = strings.TrimSuffix(s[i+len("(expanded: "):], ")")
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("tracefs: buffer_size_kb: %q: %w", b, err)
	}
	return n, nil
}

// SetBufferSizeKB sets the per-CPU ring buffer size in KiB.
func (f *FS) SetBufferSizeKB(kb int) error {
	if kb <= 0 {
		return fmt.Errorf("tracefs: bad buffer size %d KiB", kb)
	}
	if err := f.WriteFile([]byte(strconv.Itoa(kb)), "buffer_size_kb"); err != nil {
		return fmt.Errorf("tracefs: set buffer size: %w", err)
	}
	return nil
}

// TraceClock returns the selected trace clock (the bracketed entry of
// trace_clock, e.g. "local").
func (f *FS) TraceClock() (string, error) {
	b, err := f.ReadFile("trace_clock")
	if err != nil {
		return "", err
	}
	for _, w := range strings.Fields(string(b)) {
		if strings.HasPrefix(w, "[") && strings.HasSuffix(w, "]") {
			return w[1 : len(w)-1], nil
		}
	}
	return "", fmt.Errorf("tracefs: trace_clock: no selected clock in %q", b)
}

// SetTraceClock selects a trace clock (local, global, mono, boot, …).
func (f *FS) SetTraceClock(name string) error {
	if name == "" || strings.ContainsAny(name, " \t\n/[]") {
		return fmt.Errorf("tracefs: bad clock name %q", name)
	}
	return f.WriteFile([]byte(name), "trace_clock")
}

// Exists reports whether a file or directory below the root exists.
func (f *FS) Exists(rel ...string) bool {
	p, err := f.Path(rel...)
	if err != nil {
		return false
	}
	_, err = os.Stat(p)
	return err == nil
}

func (f *FS) readInt(rel ...string) (int64, error) {
	b, err := f.ReadFile(rel...)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("tracefs: %s: %w", strings.Join(rel, "/"), err)
	}
	return n, nil
}
