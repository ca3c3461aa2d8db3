//go:build linux

package calls

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/ptsynth"
	"github.com/iotap/iotap/internal/vmlab"
)

// TestLabModuleKcore decodes kernel-mode trace through a loaded module and
// the kernel from the live /proc/kcore of the lab kernel, as root in the
// QEMU guest. testdata/ptmod (three functions calling each other) is
// built against the lab kernel's source and loaded with insmod; then
// LoadKernel("/proc/kcore", "/proc/kallsyms") reads the kernel text and,
// through /proc/modules and /sys/module/NAME/sections, the module's code.
// Checks:
//   - the module's .text read from kcore is the .ko's .text: every byte
//     equal except relocated fields and the 5-byte call/jmp sites the
//     kernel may patch (return thunks), and every relocated call or jump
//     to a kernel symbol that is still one lands where the guest's
//     kallsyms puts that symbol;
//   - every [iotap_ptmod] text symbol of kallsyms is in a loaded section;
//   - a path through iotap_ptmod_run (ptsynth.KernelPathRegions over the
//     module and kernel code) encoded as a CPU would and decoded with the
//     live kernel image gives every instruction and the path's calls,
//     named as kallsyms names them (NAME [iotap_ptmod]); without the
//     modules' code the trace is gaps;
//   - the same for a path through a kernel function, from the live kcore
//     text (TestLabKernelCalls does it from the bzImage's vmlinux).
func TestLabModuleKcore(t *testing.T) {
	if !vmlab.InVM() {
		ko := vmlab.BuildKernelModule(t, filepath.Join("testdata", "ptmod"))
		b, err := os.ReadFile(ko)
		if err != nil {
			t.Fatal(err)
		}
		vmlab.GoTest(t, vmlab.Machine{
			Files:  map[string][]byte{"/lib/iotap_ptmod.ko": b},
			Script: "insmod /lib/iotap_ptmod.ko\ngrep iotap_ptmod /proc/modules\n",
		}, ".", "^TestLabModuleKcore$")
		return
	}
	const mod = "iotap_ptmod"
	kallsyms, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	// The oracle: kallsyms's text symbols, read here line by line, named
	// as KernelSymbols names them.
	byAddr := map[uint64]string{}
	byName := map[string]uint64{}
	var modFuncs []string
	for _, l := range strings.Split(string(kallsyms), "\n") {
		var a uint64
		var typ, name, m string
		n, _ := fmt.Sscanf(l, "%x %s %s %s", &a, &typ, &name, &m)
		if n < 3 || (typ != "t" && typ != "T") {
			continue
		}
		if n == 4 {
			if m != "["+mod+"]" {
				continue
			}
			modFuncs = append(modFuncs, name)
			name += " " + m
		}
		if byAddr[a] == "" {
			byAddr[a] = name
		}
		if _, ok := byName[name]; !ok {
			byName[name] = a
		}
	}
	if len(modFuncs) < 3 {
		t.Fatalf("kallsyms lists %v of %s", modFuncs, mod)
	}
	k, ks, err := LoadKernel("/proc/kcore", "/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	var text *intelpt.KernelSection
	regions := map[uint64][]byte{}
	for i, s := range k.Sections {
		regions[s.Addr] = s.Data
		t.Logf("section %q at %#x, %d bytes", s.Name, s.Addr, len(s.Data))
		if s.Name == "["+mod+"] .text" {
			text = &k.Sections[i]
		}
	}
	if text == nil {
		t.Fatalf("no [%s] .text among the sections", mod)
	}
	for _, f := range modFuncs {
		a, in := byName[f+" ["+mod+"]"], false
		for _, s := range k.Sections {
			in = in || (s.Name != "" && a >= s.Addr && a < s.Addr+uint64(len(s.Data)))
		}
		if !in {
			t.Errorf("%s at %#x: in no module section", f, a)
		}
	}
	checkModuleBytes(t, "/lib/"+mod+".ko", text, byName)
	checkModuleKO(t, "/lib/"+mod+".ko", mod, text, string(kallsyms))

	// A path through the module, into the kernel and back.
	run := ptsynth.KernelPathRegions(regions, byName["iotap_ptmod_run ["+mod+"]"], 4000)
	if run == nil {
		t.Fatal("no path through iotap_ptmod_run")
	}
	want := pathCalls(run, byAddr)
	t.Logf("module path: %d instructions, calls %v", len(run.Steps), want)
	if len(want) < 3 {
		t.Errorf("module path makes %d calls, want at least 3", len(want))
	}
	decodeKernelPath(t, run, k, ks, want)
	k0, ks0, err := LoadKernelFiles(KernelFiles{Kernel: "/proc/kcore", Kallsyms: "/proc/kallsyms", NoModules: true})
	if err != nil {
		t.Fatal(err)
	}
	in, err := ReadPerfData(kernelPerfData(t, run))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := Analyze(in, Options{Kernel: k0, KernelSymbols: ks0}); err != nil || r.Gaps == 0 {
		t.Errorf("without the modules' code: %v, %+v", err, r)
	}

	// A path through a kernel function, from the live kcore text.
	var entries []uint64
	for a, name := range byAddr {
		if !strings.Contains(name, "[") {
			entries = append(entries, a)
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i] < entries[j] })
	for _, e := range entries {
		r := ptsynth.KernelPathRegions(regions, e, 4000)
		if r == nil || len(r.Steps) < 150 {
			continue
		}
		w := pathCalls(r, byAddr)
		callees := map[string]bool{}
		for _, c := range w {
			callees[c] = true
		}
		if len(w) >= 3 && len(callees) >= 2 {
			t.Logf("kernel path through %s: %d instructions, calls %v", byAddr[e], len(r.Steps), w)
			decodeKernelPath(t, r, k, ks, w)
			return
		}
	}
	t.Error("no kernel function with a synthesizable path in kcore's text")
}

func kernelPerfData(t *testing.T, run *ptsynth.Run) []byte {
	t.Helper()
	run.PID, run.Comm = 1, "kernel"
	enc, err := ptsynth.Encode(run, ptsynth.X86, ptsynth.Options{PSBPeriod: 512})
	if err != nil {
		t.Fatal(err)
	}
	return ptsynth.PerfData(run, enc, ptsynth.PerfOptions{PerThread: true})
}

// decodeKernelPath encodes run as a CPU would trace it and checks that
// Analyze with the kernel image decodes every instruction into the calls
// want.
func decodeKernelPath(t *testing.T, run *ptsynth.Run, k *intelpt.KernelImage, ks *KernelSymbols, want []string) {
	t.Helper()
	in, err := ReadPerfData(kernelPerfData(t, run))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	res, err := Analyze(in, Options{Kernel: k, KernelSymbols: ks, OnBegin: func(c *Call) {
		if c.Kind != KindRoot {
			got = append(got, c.Kind+" "+c.Func)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Gaps != 0 || res.Stats.Insns != uint64(len(run.Steps)) {
		t.Errorf("%d gaps, %d instructions of %d", res.Gaps, res.Stats.Insns, len(run.Steps))
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("calls\n%v\nwant\n%v", got, want)
	}
}

// checkModuleBytes compares the module's .text read from kcore with the
// .ko's: equal but for relocated fields and patchable 5-byte call/jmp
// sites; a relocated call or jmp to an undefined (kernel) symbol that is
// still a call or jmp goes to kallsyms's address of the symbol.
func checkModuleBytes(t *testing.T, koPath string, live *intelpt.KernelSection, byName map[string]uint64) {
	t.Helper()
	f, err := elf.Open(koPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".text")
	ko, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	if len(live.Data) < len(ko) {
		t.Fatalf(".text: %d bytes read, the .ko has %d", len(live.Data), len(ko))
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	rela := f.Section(".rela.text")
	rb, err := rela.Data()
	if err != nil {
		t.Fatal(err)
	}
	allowed := make([]bool, len(ko))
	checked := 0
	for i := 0; i+24 <= len(rb); i += 24 {
		off := binary.LittleEndian.Uint64(rb[i:])
		info := binary.LittleEndian.Uint64(rb[i+8:])
		typ, symIdx := elf.R_X86_64(info&0xffffffff), int(info>>32)
		n := 4
		if typ == elf.R_X86_64_64 {
			n = 8
		}
		for j := off; j < off+uint64(n) && j < uint64(len(ko)); j++ {
			allowed[j] = true
		}
		if off >= 1 && (ko[off-1] == 0xe8 || ko[off-1] == 0xe9) && (typ == elf.R_X86_64_PLT32 || typ == elf.R_X86_64_PC32) {
			for j := off - 1; j < off+4; j++ {
				allowed[j] = true
			}
			sym := syms[symIdx-1]
			if sym.Section == elf.SHN_UNDEF && live.Data[off-1] == ko[off-1] {
				disp := int32(binary.LittleEndian.Uint32(live.Data[off:]))
				target := live.Addr + off + 4 + uint64(int64(disp))
				if want, ok := byName[sym.Name]; !ok || target != want {
					t.Errorf(".text+%#x: %#x to %s lands at %#x, kallsyms: %#x", off-1, ko[off-1], sym.Name, target, want)
				}
				checked++
			}
		}
	}
	diff := 0
	for i := range ko {
		if live.Data[i] != ko[i] && !allowed[i] {
			if diff++; diff <= 10 {
				t.Errorf(".text+%#x: %#02x in kcore, %#02x in the .ko (not a relocation or call site)", i, live.Data[i], ko[i])
			}
		}
	}
	t.Logf(".text: %d bytes compared with the .ko, %d relocated calls/jumps to the kernel checked against kallsyms", len(ko), checked)
	if bytes.Equal(live.Data[:len(ko)], make([]byte, len(ko))) {
		t.Error(".text read from kcore is zeros")
	}
}

// checkModuleKO lays out the .ko as the kernel loaded it
// (addModuleKOs, intelpt.LoadModuleKO: its sections at /sys/module's addresses, the
// relocations applied with kallsyms's addresses) and compares its .text
// with the one read from kcore: equal but at the return-thunk jumps the
// kernel patched at load time (jmp __x86_return_thunk to ret), which the
// .ko keeps.
func checkModuleKO(t *testing.T, koPath, mod string, live *intelpt.KernelSection, kallsyms string) {
	t.Helper()
	all := map[string]uint64{}
	for _, l := range strings.Split(kallsyms, "\n") {
		var a uint64
		var typ, name string
		if n, _ := fmt.Sscanf(l, "%x %s %s", &a, &typ, &name); n == 3 {
			if _, ok := all[name]; !ok {
				all[name] = a
			}
		}
	}
	// as LoadKernelFiles does for a vmlinux with ModuleDir (all the
	// loaded modules whose .ko is in the directory: here this one)
	var k intelpt.KernelImage
	if err := addModuleKOs(&k, KernelFiles{Modules: "/proc/modules", SysModule: "/sys/module", ModuleDir: filepath.Dir(koPath)}, all); err != nil {
		t.Fatal(err)
	}
	secs := k.Sections
	var text []byte
	for _, s := range secs {
		if s.Name == "["+mod+"] .text" && s.Addr == live.Addr {
			text = s.Data
		}
	}
	if text == nil {
		t.Fatalf("LoadModuleKO: no .text at %#x: %v", live.Addr, secs)
	}
	thunk := all["__x86_return_thunk"]
	diff, patched := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == live.Data[i] {
			continue
		}
		// a jmp rel32 to the return thunk, patched: skip its 5 bytes
		if text[i] == 0xe9 && i+5 <= len(text) && live.Addr+uint64(i)+5+uint64(int64(int32(binary.LittleEndian.Uint32(text[i+1:])))) == thunk {
			patched++
			i += 4
			continue
		}
		if diff++; diff <= 10 {
			t.Errorf("relocated .ko .text+%#x: %#02x, kcore %#02x", i, text[i], live.Data[i])
		}
	}
	t.Logf("relocated .ko: .text (%d bytes) equals kcore's but at %d patched return-thunk jumps", len(text), patched)
}
