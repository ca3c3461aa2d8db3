package intelpt

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ModuleSection is where a section of code of a loaded kernel module is:
// its module, section name, run-time address and size.
type ModuleSection struct {
	Module, Section string
	Addr, Size      uint64
}

// maxModuleSection bounds a module section's size when nothing else does.
const maxModuleSection = 16 << 20

// isCodeSection reports whether a module section (as /sys/module/NAME/
// sections lists them) holds code that stays after loading: .text and
// .text.*, other *.text sections but the freed .init.text, and the
// alternatives' replacement code.
func isCodeSection(name string) bool {
	switch {
	case strings.HasPrefix(name, ".init"):
		return false
	case name == ".text", strings.HasPrefix(name, ".text."), strings.HasSuffix(name, ".text"),
		name == ".altinstr_replacement", name == ".fixup":
		return true
	}
	return false
}

// ReadModuleSections lists the code sections of the live modules of the
// running kernel: the modules from procModules (/proc/modules: name,
// size, state, address), their sections' addresses from sysModule
// (/sys/module: NAME/sections/SECTION holds the address). Both need root
// to show addresses (otherwise they read 0, an error here). A section's
// size is the module's .ko's when koDir is not "" and holds NAME.ko
// (module names use '_' where the file may have '-'); otherwise it runs
// to the next section of any module, within the module's size from
// /proc/modules (the code ends there or earlier: reading a little past a
// section's end only adds bytes that no trace reaches).
func ReadModuleSections(procModules, sysModule, koDir string) ([]ModuleSection, error) {
	f, err := os.Open(procModules)
	if err != nil {
		return nil, fmt.Errorf("intelpt: modules: %w", err)
	}
	defer f.Close()
	type mod struct {
		name       string
		base, size uint64
	}
	var mods []mod
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fl := strings.Fields(sc.Text())
		if len(fl) < 6 {
			return nil, fmt.Errorf("intelpt: %s:%d: want name size refs deps state address, have %q", procModules, line, sc.Text())
		}
		size, err1 := strconv.ParseUint(fl[1], 10, 64)
		base, err2 := strconv.ParseUint(strings.TrimPrefix(fl[5], "0x"), 16, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("intelpt: %s:%d: bad size or address in %q", procModules, line, sc.Text())
		}
		if base == 0 {
			return nil, fmt.Errorf("intelpt: %s:%d: module %s at address 0: addresses are hidden (read it as root; kernel.kptr_restrict)", procModules, line, fl[0])
		}
		mods = append(mods, mod{fl[0], base, size})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("intelpt: %s: %w", procModules, err)
	}
	var all []ModuleSection // every section, code or not, for the bounds
	limit := map[string]uint64{}
	for _, m := range mods {
		limit[m.name] = m.base + m.size
		dir := filepath.Join(sysModule, m.name, "sections")
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("intelpt: module %s: %w", m.name, err)
		}
		var ko map[string]uint64
		if koDir != "" {
			ko = koSectionSizes(koDir, m.name)
		}
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				return nil, fmt.Errorf("intelpt: module %s: %w", m.name, err)
			}
			a, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x"), 16, 64)
			if err != nil {
				return nil, fmt.Errorf("intelpt: %s/%s: %q is not an address", dir, e.Name(), b)
			}
			if a == 0 {
				return nil, fmt.Errorf("intelpt: %s/%s: address 0: addresses are hidden (read it as root)", dir, e.Name())
			}
			all = append(all, ModuleSection{Module: m.name, Section: e.Name(), Addr: a, Size: ko[e.Name()]})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Addr < all[j].Addr })
	var out []ModuleSection
	for i, s := range all {
		if !isCodeSection(s.Section) {
			continue
		}
		if s.Size == 0 {
			end := min(limit[s.Module], s.Addr+maxModuleSection)
			for _, n := range all[i+1:] {
				if n.Addr > s.Addr {
					end = min(end, n.Addr)
					break
				}
			}
			if end <= s.Addr {
				continue
			}
			s.Size = end - s.Addr
		}
		out = append(out, s)
	}
	return out, nil
}

// koSectionSizes reads the section sizes of DIR/NAME.ko (nil when there
// is none).
func koSectionSizes(dir, name string) map[string]uint64 {
	for _, n := range []string{name, strings.ReplaceAll(name, "_", "-")} {
		f, err := elf.Open(filepath.Join(dir, n+".ko"))
		if err != nil {
			continue
		}
		defer f.Close()
		m := map[string]uint64{}
		for _, s := range f.Sections {
			m[s.Name] = s.Size
		}
		return m
	}
	return nil
}

// AddModulesFromCore adds the code of module sections (ReadModuleSections)
// to k, read from the core file core (/proc/kcore of the same running
// kernel). Sections the core does not hold are an error.
func (k *KernelImage) AddModulesFromCore(core string, secs []ModuleSection) error {
	f, err := elf.Open(core)
	if err != nil {
		return fmt.Errorf("intelpt: modules: %w", err)
	}
	defer f.Close()
	if f.Type != elf.ET_CORE {
		return fmt.Errorf("intelpt: modules: %s is not a core file (/proc/kcore)", core)
	}
	for _, s := range secs {
		got, err := readCore(f, s.Addr, s.Addr+s.Size)
		if err != nil {
			return fmt.Errorf("intelpt: module %s %s: %w", s.Module, s.Section, err)
		}
		if len(got) == 0 {
			return fmt.Errorf("intelpt: module %s %s at %#x: not in %s", s.Module, s.Section, s.Addr, core)
		}
		for _, g := range got {
			g.Name = "[" + s.Module + "] " + s.Section
			k.Sections = append(k.Sections, g)
		}
	}
	return nil
}

// LoadModuleKO lays out the code of a module's .ko file as the kernel
// loaded it: its code sections (not .init*) at the run-time addresses
// sectionAddr gives (a copy of /sys/module/NAME/sections), with the
// relocations of x86-64 modules applied (R_X86_64_64, _32, _32S, _PC32,
// _PLT32): symbols of the module at their sections' addresses, undefined
// ones (the kernel's, other modules') from resolve (e.g. /proc/kallsyms).
// What the kernel patches at load time (return thunks, alternatives,
// static calls) is not redone: those sites keep the .ko's instructions.
func LoadModuleKO(path, module string, sectionAddr map[string]uint64, resolve func(name string) (uint64, bool)) ([]KernelSection, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("intelpt: module: %w", err)
	}
	defer f.Close()
	if f.Type != elf.ET_REL || f.Machine != elf.EM_X86_64 {
		return nil, fmt.Errorf("intelpt: module: %s is not an x86-64 kernel module (%v %v)", path, f.Type, f.Machine)
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("intelpt: module: %s: %w", path, err)
	}
	data := map[int][]byte{} // loaded code sections by index
	var out []KernelSection
	for i, s := range f.Sections {
		a, ok := sectionAddr[s.Name]
		if !ok || s.Flags&elf.SHF_EXECINSTR == 0 || s.Type != elf.SHT_PROGBITS || strings.HasPrefix(s.Name, ".init") {
			continue
		}
		b, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("intelpt: module: %s %s: %w", path, s.Name, err)
		}
		data[i] = b
		out = append(out, KernelSection{Addr: a, Data: b, Name: "[" + module + "] " + s.Name})
	}
	le := binaryLE
	for _, rs := range f.Sections {
		b, ok := data[int(rs.Info)]
		if rs.Type != elf.SHT_RELA || !ok {
			continue
		}
		target := f.Sections[rs.Info]
		rb, err := rs.Data()
		if err != nil {
			return nil, fmt.Errorf("intelpt: module: %s %s: %w", path, rs.Name, err)
		}
		for i := 0; i+24 <= len(rb); i += 24 {
			off := le.Uint64(rb[i:])
			info := le.Uint64(rb[i+8:])
			add := int64(le.Uint64(rb[i+16:]))
			typ, idx := elf.R_X86_64(info&0xffffffff), int(info>>32)
			if typ == elf.R_X86_64_NONE {
				continue
			}
			if idx < 1 || idx > len(syms) {
				return nil, fmt.Errorf("intelpt: module: %s %s: relocation %d: symbol %d out of range", path, rs.Name, i/24, idx)
			}
			sym := syms[idx-1]
			var S uint64
			switch {
			case sym.Section == elf.SHN_UNDEF:
				if S, ok = resolve(sym.Name); !ok {
					return nil, fmt.Errorf("intelpt: module: %s: symbol %s is not in the kernel's symbols", path, sym.Name)
				}
			case sym.Section == elf.SHN_ABS:
				S = sym.Value
			case int(sym.Section) < len(f.Sections):
				a, ok := sectionAddr[f.Sections[sym.Section].Name]
				if !ok {
					continue // a section that was not loaded (.init*, discarded): its references are not code we map
				}
				S = a + sym.Value
			default:
				return nil, fmt.Errorf("intelpt: module: %s: symbol %s in section %d", path, sym.Name, sym.Section)
			}
			P := sectionAddr[target.Name] + off
			v := uint64(int64(S) + add)
			switch typ {
			case elf.R_X86_64_64:
				if off > uint64(len(b)) || uint64(len(b))-off < 8 { // off+8 may wrap
					return nil, fmt.Errorf("intelpt: module: %s %s+%#x: relocation past the section", path, target.Name, off)
				}
				le.PutUint64(b[off:], v)
				continue
			case elf.R_X86_64_PC32, elf.R_X86_64_PLT32:
				v -= P
			case elf.R_X86_64_32, elf.R_X86_64_32S:
			default:
				return nil, fmt.Errorf("intelpt: module: %s %s+%#x: relocation type %v not supported", path, target.Name, off, typ)
			}
			if off > uint64(len(b)) || uint64(len(b))-off < 4 { // off+4 may wrap
				return nil, fmt.Errorf("intelpt: module: %s %s+%#x: relocation past the section", path, target.Name, off)
			}
			le.PutUint32(b[off:], uint32(v))
		}
	}
	return out, nil
}

var binaryLE = binary.LittleEndian
