package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrSameFile is returned (wrapped, with both paths) by Create and
// Inputs.Check when an output is the same file as an input.
var ErrSameFile = errors.New("output is the same file as an input")

// Mode says how Create writes the file.
type Mode int

const (
	// Atomic writes to a temporary file in the same directory; Commit
	// renames it over the final name (replacing an existing regular file),
	// Abort removes it. The default.
	Atomic Mode = iota
	// Exclusive creates the final name, failing if anything exists there
	// (fs.ErrExist); Abort removes the file.
	Exclusive
	// InPlace creates or truncates the final name and writes there, so
	// that the data of a killed process is found under its name (live
	// captures). Abort closes and removes the file.
	InPlace
)

// Options control Create.
type Options struct {
	// Inputs, when set, are the files the output must not be.
	Inputs *Inputs
	// Mode is how the file is written; Atomic by default.
	Mode Mode
	// Stdout receives the output for the path "-" (os.Stdout when nil).
	Stdout io.Writer
}

// Inputs is a set of input files an output must not be. The zero value is
// an empty set.
type Inputs struct {
	files []input
}

type input struct {
	name string
	fi   os.FileInfo
}

// Add registers the files at paths. "-" and "" (standard input) are
// ignored, as are paths that cannot be inspected (opening them reports the
// error). A directory registers the regular files directly inside it (a
// capture directory).
func (in *Inputs) Add(paths ...string) {
	for _, p := range paths {
		if p == "" || p == "-" {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			in.files = append(in.files, input{p, fi})
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			continue
		}
		for _, de := range ents {
			q := filepath.Join(p, de.Name())
			if fi, err := os.Stat(q); err == nil && fi.Mode().IsRegular() {
				in.files = append(in.files, input{q, fi})
			}
		}
	}
}

// AddFile registers an open input file.
func (in *Inputs) AddFile(f *os.File) {
	if fi, err := f.Stat(); err == nil {
		in.files = append(in.files, input{f.Name(), fi})
	}
}

// Check returns an error wrapping ErrSameFile when path names (through
// any link) one of the inputs. A path that does not exist is no input.
func (in *Inputs) Check(path string) error {
	if in == nil || path == "-" || path == "" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	for _, f := range in.files {
		if os.SameFile(fi, f.fi) {
			if filepath.Clean(f.name) == filepath.Clean(path) {
				return fmt.Errorf("%w: %s (write the output to another file)", ErrSameFile, path)
			}
			return fmt.Errorf("%w: %s is %s (write the output to another file)", ErrSameFile, path, f.name)
		}
	}
	return nil
}

// File is an output being written. Its methods are not safe for concurrent
// use.
type File struct {
	w     io.Writer
	f     *os.File // nil for standard output
	name  string   // final name
	tmp   string   // temporary name (Atomic), "" otherwise
	owned bool     // Abort removes the file at name (Exclusive, InPlace)
	done  bool
	ok    bool  // committed
	n     int64 // bytes written
}

// Create opens path for writing as described in the package comment.
func Create(path string, opt Options) (*File, error) {
	if path == "-" {
		w := opt.Stdout
		if w == nil {
			w = os.Stdout
		}
		return &File{w: w, name: "-"}, nil
	}
	if path == "" {
		return nil, errors.New("outfile: empty output path")
	}
	if err := opt.Inputs.Check(path); err != nil {
		return nil, err
	}
	fi, err := os.Lstat(path)
	if err := refuse(path, fi, err); err != nil {
		return nil, err
	}
	switch {
	case err == nil && fi.Mode()&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe) != 0:
		if opt.Mode == Exclusive {
			return nil, fmt.Errorf("create %s: %w", path, fs.ErrExist)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|noFollow, 0)
		if err != nil {
			return nil, explain(path, err)
		}
		return &File{w: f, f: f, name: path}, nil
	}
	switch opt.Mode {
	case Exclusive, InPlace:
		flag := os.O_WRONLY | os.O_CREATE | noFollow
		if opt.Mode == Exclusive {
			flag |= os.O_EXCL
		} else {
			flag |= os.O_TRUNC
		}
		f, err := os.OpenFile(path, flag, 0o600)
		if err != nil {
			return nil, explain(path, err)
		}
		// An existing file keeps its mode on O_TRUNC: make it private.
		if err := f.Chmod(0o600); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			f.Close()
			return nil, explain(path, err)
		}
		return &File{w: f, f: f, name: path, owned: true}, nil
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	// os.CreateTemp creates with O_EXCL (never through a link) and mode 0600.
	f, err := os.CreateTemp(dir, "."+base+".iotap-*")
	if err != nil {
		return nil, explain(path, err)
	}
	return &File{w: f, f: f, name: path, tmp: f.Name()}, nil
}

// Check reports whether Create would refuse path (one of opt.Inputs, a
// symbolic link, a directory, a file neither regular nor a device or
// pipe), without creating anything: a job that writes its output last
// checks it first.
func Check(path string, opt Options) error {
	if path == "-" {
		return nil
	}
	if err := opt.Inputs.Check(path); err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	return refuse(path, fi, err)
}

// refuse is Create's refusal of what Lstat(path) found: fi, err.
func refuse(path string, fi fs.FileInfo, err error) error {
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return explain(path, err)
	case err != nil:
		return nil
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: iotap does not write through links (name the target itself, or - for standard output)", path)
	case fi.IsDir():
		return fmt.Errorf("%s is a directory (name a file to write)", path)
	case fi.Mode()&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe) != 0:
		return nil
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%v)", path, fi.Mode().Type())
	}
	return nil
}

// Write writes p to the file.
func (f *File) Write(p []byte) (int, error) {
	if f.done {
		return 0, fmt.Errorf("outfile: write to %s after Commit or Abort", f.name)
	}
	n, err := f.w.Write(p)
	f.n += int64(n)
	return n, err
}

// Written is the number of bytes written so far.
func (f *File) Written() int64 { return f.n }

// Committed says whether Commit succeeded.
func (f *File) Committed() bool { return f.ok }

// Name is the final path ("-" for standard output).
func (f *File) Name() string { return f.name }

// OS is the underlying *os.File (the temporary file in Atomic mode), nil
// for standard output. Writes through it bypass nothing; Commit and Abort
// still close it.
func (f *File) OS() *os.File { return f.f }

// Commit flushes the data to disk and, in Atomic mode, puts the file in
// place under its final name. After Commit, Abort does nothing.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	if f.f == nil {
		f.ok = true
		return nil
	}
	err := f.f.Sync()
	if err != nil && (errors.Is(err, errors.ErrUnsupported) || isNotSyncable(err)) {
		err = nil // a device or pipe
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if f.tmp == "" {
		if err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
		f.ok = true
		return nil
	}
	if err != nil {
		os.Remove(f.tmp)
		return fmt.Errorf("write %s: %w", f.name, err)
	}
	if err := os.Rename(f.tmp, f.name); err != nil {
		os.Remove(f.tmp)
		return explain(f.name, err)
	}
	syncDir(filepath.Dir(f.name))
	f.ok = true
	return nil
}

// Abort closes the file and removes what Create made (the temporary file,
// or the file Exclusive/InPlace created). It does nothing after Commit and
// returns nothing useful to check: use it in a defer.
func (f *File) Abort() error {
	if f.done {
		return nil
	}
	f.done = true
	if f.f == nil {
		return nil
	}
	err := f.f.Close()
	switch {
	case f.tmp != "":
		os.Remove(f.tmp)
	case f.owned:
		os.Remove(f.name)
	}
	return err
}

// explain adds a remedy to permission errors.
func explain(path string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		dir := filepath.Dir(path)
		return fmt.Errorf("cannot write %s: permission denied (write to a directory you may write to, e.g. your home, or check the permissions of %s)", path, dir)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Path, ".iotap-") {
		// Report the name the user gave, not the temporary one.
		return fmt.Errorf("cannot write %s: %w", path, pe.Err)
	}
	return err
}

// WriteFile writes data to path through Create and Commit (Atomic unless
// opt says otherwise).
func WriteFile(path string, data []byte, opt Options) error {
	f, err := Create(path, opt)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// Move puts the complete file src (written by the caller, e.g. in a
// staging directory beside path) in place under path as Commit does: a
// regular file there is replaced; path is refused as Create refuses it (a
// symbolic link, a directory, one of opt.Inputs); a device or pipe at path
// receives a copy. src is gone afterwards, moved or removed.
func Move(src, path string, opt Options) error {
	defer os.Remove(src) // nothing left after a rename
	if err := opt.Inputs.Check(path); err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		opt.Mode = Atomic
		f, err := Create(path, opt) // refuses a link or a directory
		if err != nil {
			return err
		}
		in, err := os.Open(src)
		if err == nil {
			_, err = io.Copy(f, in)
			in.Close()
		}
		if err != nil {
			f.Abort()
			return fmt.Errorf("write %s: %w", path, err)
		}
		return f.Commit()
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return explain(path, err)
	}
	if err := os.Rename(src, path); err != nil {
		return explain(path, err)
	}
	syncDir(filepath.Dir(path))
	return nil
}
