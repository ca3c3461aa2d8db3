package calls

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/symtab"
	"github.com/iotap/iotap/ksym"
)

// KernelSymbols names kernel code: from /proc/kallsyms (Kallsyms) when
// given, else from the vmlinux's symbol table moved by its KASLR slide.
type KernelSymbols struct {
	Kallsyms *ksym.Table
	vmlinux  *symtab.Table
	slide    uint64
}

// NewKernelSymbols names kernel code from kallsyms (nil: none) and, for
// what it does not name, the symbols of k's vmlinux (nil or /proc/kcore:
// none).
func NewKernelSymbols(kallsyms *ksym.Table, k *intelpt.KernelImage) (*KernelSymbols, error) {
	ks := &KernelSymbols{Kallsyms: kallsyms}
	if k != nil && k.Vmlinux {
		// a stripped vmlinux (from a bzImage) names nothing: kallsyms does
		if t, err := symtab.Open(k.Path, symtab.Options{}); err == nil && len(t.Symbols()) > 0 {
			ks.vmlinux, ks.slide = t, k.Slide
		} else if kallsyms == nil {
			return nil, fmt.Errorf("calls: kernel %s has no symbols: give /proc/kallsyms", k.Path)
		}
	}
	return ks, nil
}

// IsKernel reports whether addr is a kernel address (the upper half).
func IsKernel(addr uint64) bool { return addr>>63 != 0 }

// Func implements Symbolizer for kernel addresses.
func (k *KernelSymbols) Func(addr uint64) (Func, bool) {
	if k == nil {
		return Func{}, false
	}
	if k.Kallsyms != nil {
		if l, ok := k.Kallsyms.Lookup(addr); ok {
			name := l.Func
			if l.Module != "" {
				name += " [" + l.Module + "]"
			}
			e := addr - l.Offset
			return Func{Entry: e, End: e + 1, Name: name}, true
		}
	}
	if k.vmlinux != nil {
		if sym, start, end, ok := k.vmlinux.LookupRange(addr - k.slide); ok {
			return Func{Entry: start + k.slide, End: end + k.slide, Name: sym.Name}, true
		}
	}
	return Func{}, false
}

// Unknown implements Symbolizer: "[kernel]+0xADDR".
func (k *KernelSymbols) Unknown(addr uint64) string {
	return "[kernel 0x" + strconv.FormatUint(addr, 16) + "]"
}

// LoadKernel reads the kernel for Options.Kernel and
// Options.KernelSymbols: kernel is a vmlinux or /proc/kcore ("": none),
// kallsyms a /proc/kallsyms text ("": none; needed for /proc/kcore and a
// stripped vmlinux, and it gives the KASLR slide of a vmlinux). With
// /proc/kcore, the code of the loaded modules is read from it too
// (KernelFiles).
func LoadKernel(kernel, kallsyms string) (*intelpt.KernelImage, *KernelSymbols, error) {
	return LoadKernelFiles(KernelFiles{Kernel: kernel, Kallsyms: kallsyms})
}

// KernelFiles name the kernel's code and symbols (LoadKernelFiles).
type KernelFiles struct {
	// Kernel is a vmlinux or a core file of the running kernel
	// (/proc/kcore); Kallsyms its /proc/kallsyms.
	Kernel, Kallsyms string
	// Modules and SysModule are /proc/modules and /sys/module of the
	// kernel whose core Kernel is: the modules' code is read from the
	// core at the addresses they give (intelpt.ReadModuleSections). ""
	// when Kernel is /proc/kcore: the running kernel's; otherwise none.
	Modules, SysModule string
	// NoModules: the kernel image only.
	NoModules bool
	// ModuleDir holds NAME.ko files whose section sizes bound the
	// modules' code exactly ("": none needed). With a vmlinux as Kernel
	// and Modules and SysModule given (copies from the traced machine),
	// the modules' code is their .ko files' (intelpt.LoadModuleKO:
	// relocated with Kallsyms's addresses; the kernel's load-time patches
	// are not redone).
	ModuleDir string
}

// addModuleKOs maps the .ko files of the modules kf.Modules lists.
func addModuleKOs(k *intelpt.KernelImage, kf KernelFiles, syms map[string]uint64) error {
	b, err := os.ReadFile(kf.Modules)
	if err != nil {
		return err
	}
	for _, l := range strings.Split(string(b), "\n") {
		name, _, _ := strings.Cut(l, " ")
		if name == "" {
			continue
		}
		ko := ""
		for _, n := range []string{name, strings.ReplaceAll(name, "_", "-")} {
			if p := filepath.Join(kf.ModuleDir, n+".ko"); fileExists(p) {
				ko = p
			}
		}
		if ko == "" {
			continue // not given: its code stays unmapped (gaps)
		}
		dir := filepath.Join(kf.SysModule, name, "sections")
		ents, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("calls: module %s: %w", name, err)
		}
		addrs := map[string]uint64{}
		for _, e := range ents {
			v, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				return err
			}
			a, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(string(v)), "0x"), 16, 64)
			if err != nil {
				return fmt.Errorf("calls: %s/%s: %q is not an address", dir, e.Name(), v)
			}
			addrs[e.Name()] = a
		}
		secs, err := intelpt.LoadModuleKO(ko, name, addrs, func(n string) (uint64, bool) { a, ok := syms[n]; return a, ok })
		if err != nil {
			return err
		}
		k.Sections = append(k.Sections, secs...)
	}
	return nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// LoadKernelFiles reads the kernel's code, the loaded modules' code and
// the symbols that name them.
func LoadKernelFiles(kf KernelFiles) (*intelpt.KernelImage, *KernelSymbols, error) {
	var kt *ksym.Table
	var text, etext uint64
	addrs := map[string]uint64{} // kallsyms's kernel symbols, for relocations
	if kf.Kallsyms != "" {
		b, err := os.ReadFile(kf.Kallsyms)
		if err != nil {
			return nil, nil, err
		}
		syms, err := ksym.ParseKallsyms(bytes.NewReader(b))
		if err != nil {
			return nil, nil, err
		}
		for _, s := range syms {
			if _, ok := addrs[s.Name]; !ok && s.Module == "" {
				addrs[s.Name] = s.Addr
			}
			switch {
			case s.Module != "":
			case s.Name == "_text":
				text = s.Addr
			case s.Name == "_etext":
				etext = s.Addr
			}
		}
		if kt, err = ksym.Load(bytes.NewReader(b), nil); err != nil {
			return nil, nil, fmt.Errorf("calls: %s: %w", kf.Kallsyms, err)
		}
	}
	var k *intelpt.KernelImage
	if kf.Kernel != "" {
		var err error
		if k, err = intelpt.LoadKernel(kf.Kernel, text, etext); err != nil {
			return nil, nil, err
		}
		if k.Vmlinux && !kf.NoModules && kf.ModuleDir != "" && kf.Modules != "" {
			// a vmlinux: the modules from their .ko files, relocated
			if err := addModuleKOs(k, kf, addrs); err != nil {
				return nil, nil, err
			}
		}
		if !k.Vmlinux && !kf.NoModules {
			mods, sys := kf.Modules, kf.SysModule
			if mods == "" && filepath.Clean(kf.Kernel) == "/proc/kcore" {
				mods, sys = "/proc/modules", "/sys/module"
			}
			if mods != "" {
				secs, err := intelpt.ReadModuleSections(mods, sys, kf.ModuleDir)
				if err == nil {
					err = k.AddModulesFromCore(kf.Kernel, secs)
				}
				if err != nil && !(errors.Is(err, fs.ErrNotExist) && kf.Modules == "") {
					return nil, nil, err
				}
			}
		}
	}
	ks, err := NewKernelSymbols(kt, k)
	return k, ks, err
}
