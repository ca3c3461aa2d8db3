package symtab

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Symbol is a function of an ELF file, at its link-time address.
type Symbol struct {
	Addr, Size uint64
	Name       string // demangled when Table.Demangle was set
}

// Segment is a loadable segment (PT_LOAD) of the file.
type Segment struct {
	Vaddr, Off, Filesz, Memsz uint64
	Exec                      bool
}

// Table holds the functions of one ELF file, sorted by address, for
// lookups that do not allocate.
type Table struct {
	Path     string
	BuildID  []byte
	Type     elf.Type // ET_EXEC, ET_DYN (PIE or shared library)
	Segments []Segment
	syms     []Symbol // sorted by Addr, one per address
	ends     []uint64 // ends[i]: end of syms[i] (its size, or the next symbol)
}

// Options tell Open what to read.
type Options struct {
	// Demangle C++ and Rust names (github.com/ianlancetaylor/demangle).
	Demangle bool
	// NoPLT leaves out the name@plt entries.
	NoPLT bool
}

// BuildID returns the GNU build-id of an ELF file (nil when it has none).
func BuildID(f *elf.File) []byte {
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(p.Open(), 1<<16))
		if err != nil {
			continue
		}
		if id := noteBuildID(b, f.ByteOrder); id != nil {
			return id
		}
	}
	if s := f.Section(".note.gnu.build-id"); s != nil {
		if b, err := s.Data(); err == nil {
			return noteBuildID(b, f.ByteOrder)
		}
	}
	return nil
}

func noteBuildID(b []byte, bo binary.ByteOrder) []byte {
	for len(b) >= 12 {
		nsz, dsz, typ := int(bo.Uint32(b)), int(bo.Uint32(b[4:])), bo.Uint32(b[8:])
		n := 12 + (nsz+3)&^3
		d := n + (dsz+3)&^3
		if nsz < 0 || dsz < 0 || d > len(b) || n > len(b) || 12+nsz > len(b) {
			return nil
		}
		if typ == 3 && string(b[12:12+nsz]) == "GNU\x00" { // NT_GNU_BUILD_ID
			return append([]byte(nil), b[n:n+dsz]...)
		}
		b = b[d:]
	}
	return nil
}

// Open reads the function symbols of the ELF file at path: .symtab and
// .dynsym (FUNC and IFUNC symbols), and name@plt for the entries of .plt,
// .plt.sec and .plt.got.
func Open(path string, o Options) (*Table, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("symtab: %w", err)
	}
	defer f.Close()
	t, err := New(f, o)
	if err != nil {
		return nil, fmt.Errorf("symtab: %s: %w", path, err)
	}
	t.Path = path
	return t, nil
}

type cand struct {
	Symbol
	rank int // lower is better
}

// New reads the function symbols of f.
func New(f *elf.File, o Options) (*Table, error) {
	t := &Table{Type: f.Type, BuildID: BuildID(f)}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			t.Segments = append(t.Segments, Segment{Vaddr: p.Vaddr, Off: p.Off, Filesz: p.Filesz, Memsz: p.Memsz, Exec: p.Flags&elf.PF_X != 0})
		}
	}
	var cands []cand
	add := func(syms []elf.Symbol, base int) {
		for _, s := range syms {
			typ := elf.ST_TYPE(s.Info)
			if typ != elf.STT_FUNC && typ != elf.STT_GNU_IFUNC || s.Section == elf.SHN_UNDEF || s.Value == 0 || s.Name == "" {
				continue
			}
			rank := base
			switch elf.ST_BIND(s.Info) {
			case elf.STB_GLOBAL:
			case elf.STB_WEAK:
				rank++
			default:
				rank += 2
			}
			name := s.Name
			if i := strings.IndexByte(name, '@'); i > 0 { // version suffix in .symtab
				name = name[:i]
			}
			cands = append(cands, cand{Symbol{s.Value, s.Size, name}, rank})
		}
	}
	syms, err := f.Symbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, err
	}
	add(syms, 0)
	dyn, err := f.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, err
	}
	add(dyn, 0)
	sortCands(cands)
	if !o.NoPLT {
		cands = append(cands, pltSymbols(f, dyn, cands)...)
		sortCands(cands)
	}
	for i, c := range cands {
		if i > 0 && cands[i-1].Addr == c.Addr {
			// keep the largest size of the aliases
			if last := &t.syms[len(t.syms)-1]; c.Size > last.Size {
				last.Size = c.Size
			}
			continue
		}
		s := c.Symbol
		if o.Demangle {
			s.Name = demangle.Filter(s.Name)
		}
		t.syms = append(t.syms, s)
	}
	t.ends = make([]uint64, len(t.syms))
	for i, s := range t.syms {
		end := s.Addr + s.Size
		if s.Size == 0 {
			end = ^uint64(0)
			if i+1 < len(t.syms) {
				end = t.syms[i+1].Addr
			}
			// do not run past the end of the executable segment
			for _, sg := range t.Segments {
				if sg.Exec && s.Addr >= sg.Vaddr && s.Addr < sg.Vaddr+sg.Memsz && end > sg.Vaddr+sg.Memsz {
					end = sg.Vaddr + sg.Memsz
				}
			}
		}
		t.ends[i] = end
	}
	return t, nil
}

// sortCands orders the symbols by address; at one address the best
// binding first, then fewer leading underscores, then by name (a
// deterministic choice among aliases).
func sortCands(cands []cand) {
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.Addr != b.Addr {
			return a.Addr < b.Addr
		}
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		ua, ub := len(a.Name)-len(strings.TrimLeft(a.Name, "_")), len(b.Name)-len(strings.TrimLeft(b.Name, "_"))
		if ua != ub {
			return ua < ub
		}
		return a.Name < b.Name
	})
}

// pltSymbols names the PLT entries name@plt: every entry that jumps
// through a GOT slot (jmp *disp32(%rip), with or without bnd/endbr64) is
// named after the symbol of the slot's JUMP_SLOT or GLOB_DAT relocation,
// or for an IRELATIVE relocation (a call of a libc-internal IFUNC, which
// objdump names *ABS*+0xADDR@plt) after the function at the resolver's
// address.
func pltSymbols(f *elf.File, dyn []elf.Symbol, funcs []cand) []cand {
	at := map[uint64]string{} // funcs is sorted: the first name at an address is the one kept
	for _, c := range funcs {
		if _, ok := at[c.Addr]; !ok {
			at[c.Addr] = c.Name
		}
	}
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
		return nil
	}
	slots := map[uint64]string{}
	for _, name := range []string{".rela.plt", ".rela.dyn"} {
		s := f.Section(name)
		if s == nil {
			continue
		}
		b, err := s.Data()
		if err != nil {
			continue
		}
		for i := 0; i+24 <= len(b); i += 24 {
			off, info := f.ByteOrder.Uint64(b[i:]), f.ByteOrder.Uint64(b[i+8:])
			typ, sym := elf.R_X86_64(info&0xffffffff), int(info>>32)
			if typ == elf.R_X86_64_IRELATIVE && sym == 0 {
				if n, ok := at[f.ByteOrder.Uint64(b[i+16:])]; ok {
					slots[off] = n
				}
				continue
			}
			if (typ == elf.R_X86_64_JMP_SLOT || typ == elf.R_X86_64_GLOB_DAT) && sym >= 1 && sym-1 < len(dyn) {
				n := dyn[sym-1].Name
				if j := strings.IndexByte(n, '@'); j > 0 {
					n = n[:j]
				}
				slots[off] = n
			}
		}
	}
	var out []cand
	for _, name := range []string{".plt", ".plt.sec", ".plt.got"} {
		s := f.Section(name)
		if s == nil || s.Type != elf.SHT_PROGBITS {
			continue
		}
		b, err := s.Data()
		if err != nil {
			continue
		}
		ent := int(s.Entsize)
		if ent != 8 && ent != 16 {
			ent = 16
		}
		if name == ".plt.got" && s.Size%16 != 0 {
			ent = 8
		}
		for i := 0; i+ent <= len(b); i += ent {
			e := b[i : i+ent]
			// Find "ff 25 disp32" in the first bytes of the entry.
			for k := 0; k+6 <= len(e) && k <= 6; k++ {
				if e[k] != 0xff || e[k+1] != 0x25 {
					continue
				}
				next := s.Addr + uint64(i+k+6)
				got := next + uint64(int64(int32(f.ByteOrder.Uint32(e[k+2:]))))
				if n, ok := slots[got]; ok {
					out = append(out, cand{Symbol{s.Addr + uint64(i), uint64(ent), n + "@plt"}, 3})
				}
				break
			}
		}
	}
	return out
}

// Symbols returns the table's functions sorted by address (shared: do not
// modify).
func (t *Table) Symbols() []Symbol { return t.syms }

// Lookup returns the function holding the link-time address addr and the
// offset of addr in it. It does not allocate.
func (t *Table) Lookup(addr uint64) (sym *Symbol, off uint64, ok bool) {
	s := t.syms
	// the last symbol starting at or before addr
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m].Addr <= addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	i := lo - 1
	if i < 0 || addr >= t.ends[i] {
		return nil, 0, false
	}
	return &s[i], addr - s[i].Addr, true
}

// LinkAddr converts a run-time address in a mapping (start address and
// file offset of the mapping, as MMAP2 records or /proc/PID/maps give) to
// the file's link-time address: the load bias of a PIE or shared library
// is undone through the PT_LOAD segment that holds the file offset.
func (t *Table) LinkAddr(mapStart, pgoff, addr uint64) (uint64, bool) {
	fo := pgoff + (addr - mapStart)
	for _, sg := range t.Segments {
		if fo >= sg.Off && fo < sg.Off+sg.Filesz {
			return sg.Vaddr + (fo - sg.Off), true
		}
	}
	return 0, false
}

// Finder finds the files that mappings name: by path under Sysroot (or
// as is), or by build-id in build-id cache directories laid out as perf's
// ~/.debug (DIR/.build-id/xx/rest, a file or a directory holding "elf").
type Finder struct {
	Sysroot     string
	BuildIDDirs []string
}

// ErrNotFound is returned (wrapped) when no file matches a mapping.
var ErrNotFound = errors.New("file not found")

// Find returns the path of the file for the mapping of name with the
// given build-id (nil: unknown, the file at the path is taken). When the
// build-id is known, a file whose build-id differs is not taken.
func (fd *Finder) Find(name string, buildID []byte) (string, error) {
	var tried []string
	if len(buildID) > 1 {
		h := hex.EncodeToString(buildID)
		for _, d := range fd.BuildIDDirs {
			p := filepath.Join(d, ".build-id", h[:2], h[2:])
			if st, err := os.Stat(p); err == nil {
				if st.IsDir() {
					p = filepath.Join(p, "elf")
				}
				if ok, _ := hasBuildID(p, buildID); ok {
					return p, nil
				}
			}
			tried = append(tried, p)
		}
	}
	if name == "" || strings.HasPrefix(name, "[") || strings.HasPrefix(name, "//anon") {
		if len(buildID) <= 1 {
			return "", fmt.Errorf("symtab: %s: %w (not a file, and no build-id is known for it: neither its mmap record nor a build-id table gives one, so no saved copy can be looked up)", name, ErrNotFound)
		}
		return "", fmt.Errorf("symtab: %s: %w (not a file; no copy with its build-id: tried %s)", name, ErrNotFound, strings.Join(tried, ", "))
	}
	p := name
	if fd.Sysroot != "" {
		p = filepath.Join(fd.Sysroot, name)
	}
	ok, err := hasBuildID(p, buildID)
	if err == nil && ok {
		return p, nil
	}
	if err == nil {
		got, _ := fileBuildID(p)
		return "", fmt.Errorf("symtab: %s: %w: its build-id is %x, the trace's is %x (tried %s)", name, ErrNotFound, got, buildID, strings.Join(append(tried, p), ", "))
	}
	return "", fmt.Errorf("symtab: %s: %w (tried %s)", name, ErrNotFound, strings.Join(append(tried, p), ", "))
}

func fileBuildID(p string) ([]byte, error) {
	f, err := elf.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return BuildID(f), nil
}

// hasBuildID reports whether the ELF file p has the build-id (any file
// when want is empty).
func hasBuildID(p string, want []byte) (bool, error) {
	if _, err := os.Stat(p); err != nil {
		return false, err
	}
	if len(want) == 0 {
		return true, nil
	}
	got, err := fileBuildID(p)
	if err != nil {
		return false, err
	}
	return bytes.Equal(got, want), nil
}

// RunAddr converts a link-time address to its run-time address in a
// mapping of length n that starts at mapStart with file offset pgoff (the
// inverse of LinkAddr); false when the mapping does not hold it.
func (t *Table) RunAddr(mapStart, pgoff, n, link uint64) (uint64, bool) {
	for _, sg := range t.Segments {
		if link >= sg.Vaddr && link < sg.Vaddr+sg.Filesz {
			fo := sg.Off + (link - sg.Vaddr)
			if fo >= pgoff && fo < pgoff+n {
				return mapStart + (fo - pgoff), true
			}
		}
	}
	return 0, false
}

// LookupRange is Lookup that also gives the function's range [start, end)
// at link-time addresses (end: its size, or the next symbol when it has
// none).
func (t *Table) LookupRange(addr uint64) (sym *Symbol, start, end uint64, ok bool) {
	s := t.syms
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m].Addr <= addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	i := lo - 1
	if i < 0 || addr >= t.ends[i] {
		return nil, 0, 0, false
	}
	return &s[i], s[i].Addr, t.ends[i], true
}
