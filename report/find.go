package report

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/usbmon"
)

// Kind is what a file was recognised as.
type Kind struct {
	Source string `json:"source"` // usb, mmio, pt, events
	Format string `json:"format"` // human name of the format
}

// Sniff recognises a trace from its first bytes (up to 4 KiB are enough).
func Sniff(head []byte) (Kind, bool) {
	res, err := detect.Recognise(head, len(head) < detect.HeadSize) // a perf.data of tracepoints is Events
	if err != nil {
		return Kind{}, false
	}
	switch res.Kind {
	case detect.PT:
		format := "raw Intel PT"
		if bytes.HasPrefix(head, []byte("PERFILE2")) {
			format = "perf.data"
		}
		return Kind{"pt", format}, true
	case detect.MMIO:
		return Kind{"mmio", "mmiotrace log"}, true
	case detect.Events:
		if res.Format == "perf.data" {
			return Kind{"events", "perf.data"}, true // user_events, read as 'iotap events read' reads it
		}
		return Kind{"events", "user_events NDJSON"}, true
	case detect.USB:
		_, format, _ := usbmon.NewReader(bytes.NewReader(head))
		return Kind{"usb", "usbmon " + format.String()}, true
	}
	return Kind{}, false
}

// SniffFile recognises the trace in the file at path.
func SniffFile(path string) (Kind, bool) {
	k, err := SniffFileErr(path)
	return k, err == nil
}

// SniffFileErr is SniffFile with the reason. An error that does not match
// detect.ErrNotTrace means the file could not be read (permission denied,
// ...): it is not "not a trace".
func SniffFileErr(path string) (Kind, error) {
	f, err := detect.Open(path)
	if err != nil {
		return Kind{}, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		// A pipe or device cannot be read twice (recognised, then read).
		return Kind{}, fmt.Errorf("%s is not a regular file (%v): report reads files; 'iotap timeline' and the source commands read pipes", path, fi.Mode().Type())
	}
	head, _, _, err := detect.ReadHead(f)
	if err != nil {
		return Kind{}, detect.ReadError(path, err)
	}
	if _, err := detect.Head(head, len(head) < detect.HeadSize); err != nil {
		return Kind{}, fmt.Errorf("%s: %w", path, err)
	}
	k, _ := Sniff(head)
	return k, nil
}

// File is one regular file found among the inputs.
type File struct {
	// Path is where the file is read from (for a bundle member, a file
	// in a temporary directory).
	Path string
	// Name is how the report names it: Path, or BUNDLE:MEMBER for a
	// member of a bundle.
	Name  string
	named bool // an argument itself, not found in a directory or bundle
}

// Bundle is a .tar.gz bundle found among the inputs.
type Bundle struct {
	Path    string   `json:"path"`
	Members []string `json:"members"`
}

// inputs is what Find returns.
type inputs struct {
	files   []File
	bundles []Bundle
	tmp     []string // directories to remove
	windows []*cut.Windowed
}

// truncated says the loss of the trace whose window's cut is at path
// that the cut leaves out (cut.Windowed.Truncated: a half record the
// input ends with, whatever the window); "" when none.
func (in *inputs) truncated(path string) string {
	for _, w := range in.windows {
		for _, t := range w.Truncated() {
			if t.Path == path {
				return fmt.Sprintf("the input ends inside a record (offset %d): the window's cut leaves it out, 1 event lost", t.Result.TruncatedAt)
			}
		}
	}
	return ""
}

func (in *inputs) cleanup() {
	for _, d := range in.tmp {
		os.RemoveAll(d)
	}
	for _, w := range in.windows {
		w.Close()
	}
}

// find walks the arguments: directories recursively (detect.DirFiles,
// as export reads them), bundles extracted into a temporary
// directory, other files as they are. Files are sorted by name.
//
// With win set, each argument is replaced by its cut of the window
// (cut.OpenWindow: a file by the cut, a directory or bundle by a copy
// holding the cut of each trace and links to its other files); the files
// keep the names of the originals.
func find(args []string, stdin io.Reader, win func(path string) (*cut.Windowed, error)) (*inputs, error) {
	in := &inputs{}
	window := func(p string) (string, error) {
		if win == nil {
			return p, nil
		}
		w, err := win(p)
		if err != nil {
			return "", err
		}
		in.windows = append(in.windows, w)
		return w.Path, nil
	}
	for _, a := range args {
		name := a // how the argument is named in the report
		if a == "-" {
			// Standard input is read once into a private temporary
			// file: the summaries read a trace more than once.
			p, err := in.spool(stdin)
			if err != nil {
				in.cleanup()
				return nil, fmt.Errorf("standard input: %w", err)
			}
			a = p
		}
		st, err := os.Stat(a)
		if err != nil {
			in.cleanup()
			return nil, err
		}
		if !st.IsDir() && !st.Mode().IsRegular() {
			// A named pipe (or a device) is read once, into a private
			// temporary file like standard input: the summaries read a
			// trace more than once.
			p, err := in.spoolPath(a)
			if err != nil {
				in.cleanup()
				return nil, err
			}
			a = p
			if st, err = os.Stat(a); err != nil {
				in.cleanup()
				return nil, err
			}
		}
		root, prefix := a, ""
		if !st.IsDir() && IsBundle(a) {
			dir, err := os.MkdirTemp("", "iotap-report-")
			if err != nil {
				in.cleanup()
				return nil, err
			}
			in.tmp = append(in.tmp, dir)
			members, err := ExtractBundle(a, dir)
			if err != nil {
				in.cleanup()
				return nil, fmt.Errorf("%s: %w", a, err)
			}
			in.bundles = append(in.bundles, Bundle{Path: name, Members: members})
			root, prefix = dir, name+":"
		} else if !st.IsDir() {
			if !strings.HasSuffix(a, cut.IndexSuffix) {
				// an index indexes the original: not cut, read as it is
				if a, err = window(a); err != nil {
					in.cleanup()
					return nil, err
				}
			}
			in.files = append(in.files, File{Path: a, Name: name, named: true})
			continue
		}
		if win != nil {
			// the directory's copy, its files named after the originals
			if prefix == "" {
				prefix = strings.TrimSuffix(name, "/") + "/"
			}
			if root, err = window(root); err != nil {
				in.cleanup()
				return nil, err
			}
		}
		// a window's copy links the files it does not cut
		files, err := detect.DirFiles(root, win != nil)
		if err != nil {
			in.cleanup()
			return nil, err
		}
		for _, p := range files {
			name := p
			if prefix != "" {
				rel, _ := filepath.Rel(root, p)
				if w := in.lastWindow(); w != nil {
					// the original's name (a cut drops .zst)
					rel, _ = filepath.Rel(w.Input(root), w.Input(p))
				}
				name = prefix + rel
			}
			in.files = append(in.files, File{Path: p, Name: name})
		}
	}
	sort.SliceStable(in.files, func(i, j int) bool { return in.files[i].Name < in.files[j].Name })
	return in, nil
}

// lastWindow is the window cut last (the directory being walked), nil
// without a window.
func (in *inputs) lastWindow() *cut.Windowed {
	if len(in.windows) == 0 {
		return nil
	}
	return in.windows[len(in.windows)-1]
}

// IsBundle reports whether path is a gzip-compressed tar archive.
func IsBundle(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return false
	}
	defer zr.Close()
	var hdr [512]byte
	if _, err := io.ReadFull(zr, hdr[:]); err != nil {
		return false
	}
	return bytes.Equal(hdr[257:262], []byte("ustar"))
}

// MaxBundleBytes bounds what ExtractBundle writes.
const MaxBundleBytes = 8 << 30

// ExtractBundle writes the regular files of a tar.gz bundle into dir
// (flattened to their base names, mode 0600, never over an existing file)
// and returns their names.
func ExtractBundle(path, dir string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var names []string
	var total int64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names, nil
		}
		if err != nil {
			return names, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := filepath.Base(filepath.Clean("/" + h.Name))
		if name == "/" || name == "." || strings.HasPrefix(name, ".") {
			continue
		}
		out, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return names, err
		}
		n, err := io.Copy(out, io.LimitReader(tr, MaxBundleBytes-total+1))
		total += n
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return names, err
		}
		if total > MaxBundleBytes {
			return names, fmt.Errorf("bundle larger than %d bytes", int64(MaxBundleBytes))
		}
		names = append(names, name)
	}
}

// spoolPath copies the named pipe or device at path into a temporary file
// (see spool).
func (in *inputs) spoolPath(path string) (string, error) {
	f, err := detect.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	p, err := in.spool(f)
	if err != nil {
		return "", detect.ReadError(path, err)
	}
	return p, nil
}

// spool copies r (standard input) into a new 0600 file of a temporary
// directory removed by cleanup.
func (in *inputs) spool(r io.Reader) (string, error) {
	if r == nil {
		return "", errors.New("no standard input")
	}
	dir, err := os.MkdirTemp("", "iotap-report-")
	if err != nil {
		return "", err
	}
	in.tmp = append(in.tmp, dir)
	p := filepath.Join(dir, "stdin")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return p, err
}
