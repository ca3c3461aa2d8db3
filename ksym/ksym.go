package ksym

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// ErrHidden is returned (wrapped, with the symbols or modules read) when
// every address in the input is zero: the kernel hid them
// (kernel.kptr_restrict, or a reader without CAP_SYSLOG).
var ErrHidden = errors.New("all addresses are zero: the kernel hid them (kernel.kptr_restrict; read /proc/kallsyms as root with kernel.kptr_restrict=0 or 1)")

// Symbol is one line of /proc/kallsyms.
type Symbol struct {
	Addr   uint64
	Type   byte   // nm-style type letter: t/T text, w/W weak, d/D data, …
	Name   string // symbol name
	Module string // the [module] tag, "" for the kernel image
}

// IsText reports whether the symbol is code (types t, T, w, W).
func (s *Symbol) IsText() bool {
	switch s.Type {
	case 't', 'T', 'w', 'W':
		return true
	}
	return false
}

// Module is one line of /proc/modules.
type Module struct {
	Name  string
	Size  uint64 // bytes of the module's memory
	Addr  uint64 // load address (start of its text)
	State string // Live, Loading, Unloading
}

// SyntaxError is a malformed line: Line counts from 1.
type SyntaxError struct {
	File string // "kallsyms" or "modules"
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("ksym: %s line %d: %s", e.File, e.Line, e.Msg)
}

const maxLine = 1 << 16

func lines(r io.Reader, file string, fn func(n int, l []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	n := 0
	for sc.Scan() {
		n++
		l := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if err := fn(n, l); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return &SyntaxError{File: file, Line: n + 1, Msg: fmt.Sprintf("line longer than %d bytes", maxLine)}
		}
		return fmt.Errorf("ksym: %s: %w", file, err)
	}
	return nil
}

// ParseKallsyms reads /proc/kallsyms text: "ADDR TYPE NAME" with an
// optional "\t[MODULE]". It returns every symbol in input order. When all
// addresses are zero it returns them with an error wrapping ErrHidden.
func ParseKallsyms(r io.Reader) ([]Symbol, error) {
	var syms []Symbol
	nonzero := false
	err := lines(r, "kallsyms", func(n int, l []byte) error {
		f := bytes.Fields(l)
		if len(f) < 3 || len(f) > 4 {
			return &SyntaxError{File: "kallsyms", Line: n, Msg: fmt.Sprintf("want ADDR TYPE NAME [MODULE], got %d fields", len(f))}
		}
		addr, err := strconv.ParseUint(string(f[0]), 16, 64)
		if err != nil {
			return &SyntaxError{File: "kallsyms", Line: n, Msg: fmt.Sprintf("bad address %q", f[0])}
		}
		if len(f[1]) != 1 || !isLetter(f[1][0]) {
			return &SyntaxError{File: "kallsyms", Line: n, Msg: fmt.Sprintf("bad type %q", f[1])}
		}
		s := Symbol{Addr: addr, Type: f[1][0], Name: string(f[2])}
		if len(f) == 4 {
			m := f[3]
			if len(m) < 3 || m[0] != '[' || m[len(m)-1] != ']' {
				return &SyntaxError{File: "kallsyms", Line: n, Msg: fmt.Sprintf("bad module tag %q", m)}
			}
			s.Module = string(m[1 : len(m)-1])
		}
		nonzero = nonzero || addr != 0
		syms = append(syms, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(syms) > 0 && !nonzero {
		return syms, fmt.Errorf("ksym: kallsyms: %d symbols, %w", len(syms), ErrHidden)
	}
	return syms, nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// ParseModules reads /proc/modules text: "NAME SIZE REFS DEPS STATE
// ADDR [TAINTS]". When all addresses are zero it returns the modules with
// an error wrapping ErrHidden.
func ParseModules(r io.Reader) ([]Module, error) {
	var mods []Module
	nonzero := false
	err := lines(r, "modules", func(n int, l []byte) error {
		f := bytes.Fields(l)
		if len(f) < 6 {
			return &SyntaxError{File: "modules", Line: n, Msg: fmt.Sprintf("want NAME SIZE REFS DEPS STATE ADDR, got %d fields", len(f))}
		}
		size, err := strconv.ParseUint(string(f[1]), 10, 64)
		if err != nil {
			return &SyntaxError{File: "modules", Line: n, Msg: fmt.Sprintf("bad size %q", f[1])}
		}
		a := f[5]
		if !bytes.HasPrefix(a, []byte("0x")) {
			return &SyntaxError{File: "modules", Line: n, Msg: fmt.Sprintf("bad address %q", a)}
		}
		addr, err := strconv.ParseUint(string(a[2:]), 16, 64)
		if err != nil {
			return &SyntaxError{File: "modules", Line: n, Msg: fmt.Sprintf("bad address %q", a)}
		}
		nonzero = nonzero || addr != 0
		mods = append(mods, Module{Name: string(f[0]), Size: size, Addr: addr, State: string(f[4])})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(mods) > 0 && !nonzero {
		return mods, fmt.Errorf("ksym: modules: %d modules, %w", len(mods), ErrHidden)
	}
	return mods, nil
}

// Table names code addresses. The zero Table resolves nothing.
type Table struct {
	syms []Symbol // text symbols with a nonzero address, sorted, one per address
	mods []Module // sorted by Addr, nonzero addresses only
}

// NewTable builds a lookup table from the symbols (only text symbols
// are kept) and the modules (may be nil).
func NewTable(syms []Symbol, mods []Module) *Table {
	t := &Table{}
	for _, s := range syms {
		if s.IsText() && s.Addr != 0 {
			t.syms = append(t.syms, s)
		}
	}
	// Several names at one address (_text, _stext, …): keep the best,
	// stable so that input order breaks ties.
	sort.SliceStable(t.syms, func(i, j int) bool { return t.syms[i].Addr < t.syms[j].Addr })
	out := t.syms[:0]
	for _, s := range t.syms {
		if n := len(out); n > 0 && out[n-1].Addr == s.Addr {
			if better(&s, &out[n-1]) {
				out[n-1] = s
			}
			continue
		}
		out = append(out, s)
	}
	t.syms = out
	for _, m := range mods {
		if m.Addr != 0 {
			t.mods = append(t.mods, m)
		}
	}
	sort.SliceStable(t.mods, func(i, j int) bool { return t.mods[i].Addr < t.mods[j].Addr })
	return t
}

// better prefers global over local over weak symbols, then fewer leading
// underscores (e1000_foo over __pfx_e1000_foo is not at the same address,
// but _text and _stext are).
func better(a, b *Symbol) bool {
	ra, rb := rank(a.Type), rank(b.Type)
	if ra != rb {
		return ra < rb
	}
	return underscores(a.Name) < underscores(b.Name)
}

func rank(c byte) int {
	switch c {
	case 'T':
		return 0
	case 't':
		return 1
	}
	return 2
}

func underscores(s string) int {
	n := 0
	for n < len(s) && s[n] == '_' {
		n++
	}
	return n
}

// Len returns the number of text symbols in the table.
func (t *Table) Len() int { return len(t.syms) }

// Loc is a resolved code address.
type Loc struct {
	Func   string
	Offset uint64
	Module string // "" in the kernel image
}

// String formats the location as "func+0xoff [module]" (no module part
// for the kernel image).
func (l Loc) String() string {
	s := l.Func + "+0x" + strconv.FormatUint(l.Offset, 16)
	if l.Module != "" {
		s += " [" + l.Module + "]"
	}
	return s
}

// Module returns the loaded module whose memory holds addr.
func (t *Table) Module(addr uint64) (Module, bool) {
	i := sort.Search(len(t.mods), func(i int) bool { return t.mods[i].Addr > addr }) - 1
	if i >= 0 && addr-t.mods[i].Addr < t.mods[i].Size {
		return t.mods[i], true
	}
	return Module{}, false
}

func (t *Table) module(name string) (Module, bool) {
	for _, m := range t.mods {
		if m.Name == name {
			return m, true
		}
	}
	return Module{}, false
}

// maxFunc bounds the offset into a symbol of the kernel image: the last
// one has no next symbol to bound it but the first module's, far away.
const maxFunc = 1 << 20

// Lookup resolves addr to the text symbol at or below it.
func (t *Table) Lookup(addr uint64) (Loc, bool) {
	if t == nil || addr == 0 {
		return Loc{}, false
	}
	i := sort.Search(len(t.syms), func(i int) bool { return t.syms[i].Addr > addr }) - 1
	if i < 0 {
		return Loc{}, false
	}
	s := &t.syms[i]
	off := addr - s.Addr
	if s.Module != "" {
		if m, ok := t.module(s.Module); ok && addr-m.Addr >= m.Size {
			return Loc{}, false
		}
	}
	if m, ok := t.Module(addr); ok && m.Name != s.Module {
		return Loc{}, false // in a module, but below its first symbol
	}
	if s.Module == "" && off >= maxFunc {
		return Loc{}, false
	}
	return Loc{Func: s.Name, Offset: off, Module: s.Module}, true
}

// Name returns Lookup(addr) formatted, or "" when it does not resolve.
func (t *Table) Name(addr uint64) string {
	if l, ok := t.Lookup(addr); ok {
		return l.String()
	}
	return ""
}

// Load parses the text of /proc/kallsyms and /proc/modules (modules may
// be nil) into a Table. A hidden-address input (ErrHidden) still returns
// a Table, which resolves nothing, with the error: the caller reports it
// and goes on.
func Load(kallsyms, modules io.Reader) (*Table, error) {
	syms, kerr := ParseKallsyms(kallsyms)
	if kerr != nil && !errors.Is(kerr, ErrHidden) {
		return nil, kerr
	}
	var mods []Module
	var merr error
	if modules != nil {
		mods, merr = ParseModules(modules)
		if merr != nil && !errors.Is(merr, ErrHidden) {
			return nil, merr
		}
	}
	return NewTable(syms, mods), errors.Join(kerr, merr)
}
