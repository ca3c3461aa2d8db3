package calls

import (
	"bytes"
	"debug/elf"
	"path/filepath"
	"strconv"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/symtab"
)

// ProcSymbolizer names the code of a process from the symbol tables of
// its mapped files.
type ProcSymbolizer struct {
	proc  *intelpt.Process
	paths map[string]string // mapping file -> file to read (LoadImage's paths)
	opt   symtab.Options
	tabs  map[string]*symtab.Table
	// Missing lists files whose symbols could not be read.
	Missing map[string]error
	last    *intelpt.Mapping
	lastTab *symtab.Table
	unknown map[uint64]string
	// Kernel names kernel addresses (nil: they are unknown).
	Kernel *KernelSymbols
}

// NewProcSymbolizer names the code of p; paths maps each mapping's file
// name to the file found for it (nil: the names as they are).
func NewProcSymbolizer(p *intelpt.Process, paths map[string]string, opt symtab.Options) *ProcSymbolizer {
	return &ProcSymbolizer{proc: p, paths: paths, opt: opt, tabs: map[string]*symtab.Table{}, Missing: map[string]error{}}
}

func (s *ProcSymbolizer) table(m *intelpt.Mapping) *symtab.Table {
	if m == s.last {
		return s.lastTab
	}
	t, ok := s.tabs[m.File]
	if !ok {
		path := m.File
		if p, ok := s.paths[m.File]; ok {
			path = p
		}
		var err error
		if path == intelpt.VDSOName { // this process's vDSO (LoadImage)
			t, err = openVDSO(m.BuildID, s.opt)
		} else {
			t, err = symtab.Open(path, s.opt)
		}
		if err != nil {
			s.Missing[m.File] = err
			t = nil
		}
		s.tabs[m.File] = t
	}
	s.last, s.lastTab = m, t
	return t
}

// namesNone reports that Func is false for every address (no kernel
// symbols, no mappings): the decoder may then follow direct jumps inside
// blocks (Decode). Keep it in step with Func: every source of names Func
// reads must make it false.
func (s *ProcSymbolizer) namesNone() bool {
	return s.Kernel == nil && (s.proc == nil || len(s.proc.Mappings) == 0)
}

// Func implements Symbolizer.
func (s *ProcSymbolizer) Func(addr uint64) (Func, bool) {
	if s.Kernel != nil && IsKernel(addr) {
		return s.Kernel.Func(addr)
	}
	if s.proc == nil || len(s.proc.Mappings) == 0 {
		return Func{}, false
	}
	m := s.proc.Lookup(addr)
	if m == nil {
		return Func{}, false
	}
	t := s.table(m)
	if t == nil {
		return Func{}, false
	}
	link, ok := t.LinkAddr(m.Start, m.PgOff, addr)
	if !ok {
		return Func{}, false
	}
	sym, start, end, ok := t.LookupRange(link)
	if !ok {
		return Func{}, false
	}
	entry := addr - (link - start)
	return Func{Entry: entry, End: entry + (end - start), Name: sym.Name}, true
}

// Unknown implements Symbolizer: "file+0xADDR" with the file's link-time
// address (or its file offset), "[unknown 0xADDR]" outside every mapping.
func (s *ProcSymbolizer) Unknown(addr uint64) string {
	if n, ok := s.unknown[addr]; ok {
		return n
	}
	if s.unknown == nil {
		s.unknown = map[uint64]string{}
	}
	n := s.unknownName(addr)
	s.unknown[addr] = n
	return n
}

func (s *ProcSymbolizer) unknownName(addr uint64) string {
	if s.Kernel != nil && IsKernel(addr) {
		return s.Kernel.Unknown(addr)
	}
	var m *intelpt.Mapping
	if s.proc != nil {
		m = s.proc.Lookup(addr)
	}
	if m == nil {
		return "[unknown 0x" + strconv.FormatUint(addr, 16) + "]"
	}
	off := m.FileOffset(addr)
	if t := s.table(m); t != nil {
		if link, ok := t.LinkAddr(m.Start, m.PgOff, addr); ok {
			off = link
		}
	}
	return filepath.Base(m.File) + "+0x" + strconv.FormatUint(off, 16)
}

// openVDSO reads the symbols of this machine's vDSO of that build-id
// (the 64-bit or the 32-bit one; nil: the 64-bit one).
func openVDSO(buildID []byte, o symtab.Options) (*symtab.Table, error) {
	img, _, err := intelpt.ReadVDSO()
	if buildID != nil {
		img, err = intelpt.ReadVDSOFor(buildID)
	}
	if err != nil {
		return nil, err
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return nil, err
	}
	return symtab.New(f, o)
}
