package intelpt

import (
	"debug/elf"
	"fmt"
	"io"
)

// KernelImage is the kernel's code for decoding kernel-mode parts of a
// trace: the executable segments of a vmlinux, moved by the KASLR slide,
// or the kernel text read from /proc/kcore.
type KernelImage struct {
	Path string
	// Slide is added to the vmlinux's link addresses (the run-time _text
	// minus the file's _text; 0 for /proc/kcore, whose addresses are the
	// run-time ones).
	Slide uint64
	// Sections of code at their run-time addresses.
	Sections []KernelSection
	// Vmlinux: Path is an ELF executable with symbols (not a core file).
	Vmlinux bool
}

// KernelSection is code at a run-time address.
type KernelSection struct {
	Addr uint64
	Data []byte
	// Name says what the code is ("" for the kernel image; "[module]
	// .text" for a module's section).
	Name string
}

// LoadKernel reads the kernel's code from path: a vmlinux (an ELF
// executable: its executable PT_LOAD segments, moved so that its _text
// symbol lands at text, when text is not 0: the KASLR slide that
// /proc/kallsyms shows) or /proc/kcore (an ELF core file of the running
// kernel: the parts of its PT_LOAD segments inside [text, etext), which
// must be given, e.g. from /proc/kallsyms's _text and _etext).
func LoadKernel(path string, text, etext uint64) (*KernelImage, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("intelpt: kernel: %w", err)
	}
	defer f.Close()
	k := &KernelImage{Path: path, Vmlinux: f.Type != elf.ET_CORE}
	if !k.Vmlinux {
		if text == 0 || etext <= text {
			return nil, fmt.Errorf("intelpt: kernel: %s is a core file (/proc/kcore): the text range is needed (--kallsyms: _text and _etext)", path)
		}
		secs, err := readCore(f, text, etext)
		if err != nil {
			return nil, fmt.Errorf("intelpt: kernel: %s: %w", path, err)
		}
		k.Sections = secs
		if len(k.Sections) == 0 {
			return nil, fmt.Errorf("intelpt: kernel: %s holds nothing of %#x-%#x", path, text, etext)
		}
		return k, nil
	}
	if text != 0 {
		// _text: its symbol, or in a stripped vmlinux (the one inside a
		// bzImage) the start of the first executable segment, where the
		// x86 linker script puts it
		link, found := uint64(0), false
		if syms, err := f.Symbols(); err == nil {
			for _, s := range syms {
				if s.Name == "_text" {
					link, found = s.Value, true
					break
				}
			}
		}
		for _, p := range f.Progs {
			if !found && p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
				link, found = p.Vaddr, true
			}
		}
		if !found {
			return nil, fmt.Errorf("intelpt: kernel: %s has neither a _text symbol nor code (for the KASLR slide)", path)
		}
		k.Slide = text - link
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Flags&elf.PF_X == 0 || p.Filesz == 0 {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil && err != io.EOF {
			return nil, fmt.Errorf("intelpt: kernel: %s: %w", path, err)
		}
		k.Sections = append(k.Sections, KernelSection{Addr: p.Vaddr + k.Slide, Data: b})
	}
	if len(k.Sections) == 0 {
		return nil, fmt.Errorf("intelpt: kernel: %s has no executable segments", path)
	}
	return k, nil
}

// readCore reads [lo, hi) of the memory a core file (/proc/kcore) holds,
// one section per PT_LOAD segment it overlaps.
func readCore(f *elf.File, lo, hi uint64) ([]KernelSection, error) {
	var out []KernelSection
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Vaddr+p.Filesz <= lo || p.Vaddr >= hi {
			continue
		}
		a, b := max(p.Vaddr, lo), min(p.Vaddr+p.Filesz, hi)
		buf := make([]byte, b-a)
		if _, err := p.ReadAt(buf, int64(a-p.Vaddr)); err != nil && err != io.EOF {
			return nil, fmt.Errorf("%#x-%#x: %w", a, b, err)
		}
		out = append(out, KernelSection{Addr: a, Data: buf})
	}
	return out, nil
}

// AddTo maps the kernel's code into im, visible in every address space.
func (k *KernelImage) AddTo(im *Image) error {
	for _, s := range k.Sections {
		name := "[kernel] " + k.Path
		if s.Name != "" {
			name = s.Name + " " + k.Path
		}
		if _, err := im.Add(s.Data, s.Addr, ASID{AnyASID, AnyASID}, name); err != nil {
			return err
		}
	}
	return nil
}
