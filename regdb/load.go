package regdb

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Limits on untrusted database input.
const (
	maxFileSize = 64 << 20
	maxFiles    = 256
)

//go:embed db/*.yaml
var builtinFS embed.FS

// Builtins lists the names of the databases shipped with iotap ("e1000").
func Builtins() []string {
	ents, _ := fs.ReadDir(builtinFS, "db")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return out
}

// Builtin loads a database shipped with iotap by name, such as "e1000".
func Builtin(name string) (*DB, error) {
	if !slices.Contains(Builtins(), name) {
		return nil, fmt.Errorf("regdb: built-in database %q (have %s): %w", name, strings.Join(Builtins(), ", "), ErrNotFound)
	}
	return Load(builtinFS, "db/"+name+".yaml")
}

// BuiltinForPCI finds the built-in database describing BAR bar of a PCI
// device, and the domain within it.
func BuiltinForPCI(id PCIID, bar int) (*DB, *Domain, bool) {
	for _, name := range Builtins() {
		db, err := Builtin(name)
		if err != nil {
			continue
		}
		if d, ok := db.ForPCI(id, bar); ok {
			return db, d, true
		}
	}
	return nil, nil, false
}

// LoadFile loads a database file: rnndb XML or the native YAML form,
// detected from the content. XML imports are resolved relative to the
// importing file, then to the directory of path.
func LoadFile(name string) (*DB, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, fmt.Errorf("regdb: %w", err)
	}
	abs = filepath.ToSlash(abs)
	return Load(os.DirFS("/"), strings.TrimPrefix(abs, "/"))
}

// Load loads the database file name from fsys (see LoadFile).
func Load(fsys fs.FS, name string) (*DB, error) {
	l := &loader{db: newDB(), fsys: fsys, root: path.Dir(name), loaded: map[string]bool{}}
	if err := l.loadFile(name); err != nil {
		return nil, err
	}
	if err := l.db.resolve(); err != nil {
		return nil, err
	}
	return l.db, nil
}

// LoadBytes loads a database from memory; name is used in error messages.
// XML imports are not available.
func LoadBytes(name string, data []byte) (*DB, error) {
	l := &loader{db: newDB(), root: ".", loaded: map[string]bool{name: true}}
	if err := l.parse(name, name, data); err != nil {
		return nil, err
	}
	if err := l.db.resolve(); err != nil {
		return nil, err
	}
	return l.db, nil
}

type loader struct {
	db     *DB
	fsys   fs.FS
	root   string
	loaded map[string]bool
}

func displayName(fsys fs.FS, name string) string {
	if _, ok := fsys.(embed.FS); ok {
		return "regdb/" + name
	}
	return name
}

func (l *loader) loadFile(name string) error {
	if len(l.loaded) >= maxFiles {
		return fmt.Errorf("regdb: %s: more than %d files imported: %w", name, maxFiles, ErrInvalid)
	}
	l.loaded[name] = true
	f, err := l.fsys.Open(name)
	if err != nil {
		return fmt.Errorf("regdb: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return fmt.Errorf("regdb: %s: %w", name, err)
	}
	if len(data) > maxFileSize {
		return fmt.Errorf("regdb: %s: larger than %d bytes: %w", name, maxFileSize, ErrInvalid)
	}
	return l.parse(name, displayName(l.fsys, name), data)
}

// parse reads one file: fsPath is its name in the loader's file system
// (for imports), name the one shown in errors.
func (l *loader) parse(fsPath, name string, data []byte) error {
	if isXML(data) {
		x := &xmlFile{l: l, file: name, path: fsPath}
		return x.load(data)
	}
	return l.loadYAML(name, data)
}

// isXML reports whether data looks like XML: its first non-blank byte is '<'.
func isXML(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n\ufeff")
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	return len(data) > 0 && data[0] == '<'
}

// importFile loads an <import>ed file once, looking next to the importing
// file first, then next to the first file.
func (l *loader) importFile(from, file string, pos Pos) error {
	if l.fsys == nil {
		return pos.errorf("import %q: imports need a file system", file)
	}
	var cands []string
	if path.IsAbs(file) {
		cands = []string{strings.TrimPrefix(path.Clean(file), "/")}
	} else {
		cands = []string{path.Join(path.Dir(from), file), path.Join(l.root, file)}
	}
	for _, c := range cands {
		if l.loaded[c] {
			return nil
		}
	}
	for _, c := range cands {
		if !fs.ValidPath(c) {
			continue
		}
		if _, err := fs.Stat(l.fsys, c); err == nil {
			return l.loadFile(c)
		}
	}
	return pos.errorf("import %q: file not found (looked in %s)", file, strings.Join(cands, ", "))
}

func (l *loader) domain(name string, size uint64, width uint, pos Pos) (*Domain, error) {
	if d, ok := l.db.domains[name]; ok {
		if d.Width != width {
			return nil, pos.errorf("domain %s: width %d differs from %d at %s:%d", name, width, d.Width, d.Pos.File, d.Pos.Line)
		}
		if size != 0 && d.Size != 0 && size != d.Size {
			return nil, pos.errorf("domain %s: size %#x differs from %#x at %s:%d", name, size, d.Size, d.Pos.File, d.Pos.Line)
		}
		if size != 0 {
			d.Size = size
		}
		return d, nil
	}
	d := &Domain{Name: name, Size: size, Width: width, Pos: pos}
	l.db.domains[name] = d
	l.db.Domains = append(l.db.Domains, d)
	return d, nil
}

func (l *loader) enum(name string, pos Pos) *Enum {
	if e, ok := l.db.Enums[name]; ok {
		return e
	}
	e := &Enum{Name: name, Pos: pos}
	l.db.Enums[name] = e
	l.db.enumList = append(l.db.enumList, e)
	return e
}

func (l *loader) bitset(name string, pos Pos) *Bitset {
	if b, ok := l.db.Bitsets[name]; ok {
		return b
	}
	b := &Bitset{Name: name, Pos: pos}
	l.db.Bitsets[name] = b
	return b
}

// Open loads the database spec names: a file (rnndb XML or YAML), else a
// shipped database of that name (Builtins). A spec that is neither is an
// error wrapping ErrNotFound that lists the shipped names.
func Open(spec string) (*DB, error) {
	if _, err := os.Stat(spec); err == nil {
		return LoadFile(spec)
	}
	if slices.Contains(Builtins(), spec) {
		return Builtin(spec)
	}
	return nil, &notFoundError{fmt.Sprintf("%q: no such file and not a shipped database (%s)", spec, strings.Join(Builtins(), ", "))}
}

// notFoundError is an ErrNotFound with its own message.
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }
func (e *notFoundError) Unwrap() error { return ErrNotFound }
