package symtab

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt binutils/gcc)", tool)
		}
	}
}

// buildProg compiles the calls test program as a PIE.
func buildProg(t *testing.T, extra ...string) string {
	t.Helper()
	need(t, "gcc")
	out := filepath.Join(t.TempDir(), "prog")
	args := append([]string{"-fPIE", "-pie", "-O1", "-foptimize-sibling-calls", "-fno-inline", "-fno-builtin", "-o", out}, extra...)
	args = append(args, "../testdata/calls/prog.c")
	if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v: %s", err, b)
	}
	return out
}

type nmSym struct {
	addr, size uint64
	name       string
}

// nmFuncs lists the function symbols nm prints (text, weak, indirect).
func nmFuncs(t *testing.T, path string, dynamic bool) []nmSym {
	t.Helper()
	args := []string{"-S", "--defined-only"}
	if dynamic {
		args = append(args, "-D")
	}
	b, err := exec.Command("nm", append(args, path)...).Output()
	if err != nil {
		t.Fatalf("nm: %v", err)
	}
	var out []nmSym
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || !strings.ContainsAny(f[2], "TtWiI") || f[2] == "w" {
			continue
		}
		a, _ := strconv.ParseUint(f[0], 16, 64)
		s, _ := strconv.ParseUint(f[1], 16, 64)
		name, _, _ := strings.Cut(f[3], "@")
		out = append(out, nmSym{a, s, name})
	}
	return out
}

// checkAgainstNM: at every function nm lists, and at its last byte, the
// lookup gives one of the names nm lists at that function's address.
func checkAgainstNM(t *testing.T, tab *Table, syms []nmSym) {
	t.Helper()
	aliases := map[uint64]map[string]bool{}
	for _, s := range syms {
		if aliases[s.addr] == nil {
			aliases[s.addr] = map[string]bool{}
		}
		aliases[s.addr][s.name] = true
	}
	bad := 0
	for _, s := range syms {
		for _, a := range []uint64{s.addr, s.addr + s.size - 1} {
			if s.size == 0 && a != s.addr {
				continue
			}
			got, _, ok := tab.Lookup(a)
			if !ok || !aliases[s.addr][got.Name] {
				if bad++; bad < 10 {
					t.Errorf("%#x (in %s at %#x+%#x): got %v %v", a, s.name, s.addr, s.size, got, ok)
				}
			}
		}
	}
	if bad > 0 || len(syms) == 0 {
		t.Errorf("%d of %d nm symbols mismatched", bad, len(syms))
	}
	t.Logf("%d nm function symbols checked", len(syms))
}

var pltLabel = regexp.MustCompile(`^([0-9a-f]+) <(.+@plt)>:$`)

// checkPLT: objdump's name@plt labels are ours.
func checkPLT(t *testing.T, tab *Table, path string) {
	t.Helper()
	b, err := exec.Command("objdump", "-d", path).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		g := pltLabel.FindStringSubmatch(l)
		if g == nil {
			continue
		}
		a, _ := strconv.ParseUint(g[1], 16, 64)
		n++
		got, off, ok := tab.Lookup(a)
		if abs, ok2 := strings.CutPrefix(g[2], "*ABS*+0x"); ok2 {
			// an IRELATIVE slot: we name it after the IFUNC at the address
			r, _ := strconv.ParseUint(strings.TrimSuffix(abs, "@plt"), 16, 64)
			f, _, ok3 := tab.Lookup(r)
			if !ok || off != 0 || !ok3 || got.Name != f.Name+"@plt" {
				t.Errorf("objdump: %s at %#x; ours: %v %d %v (ifunc %v)", g[2], a, got, off, ok, f)
			}
			continue
		}
		name := g[2]
		if !ok || off != 0 || got.Name != name {
			t.Errorf("objdump: %s at %#x; ours: %v %d %v", g[2], a, got, off, ok)
		}
	}
	if n == 0 {
		t.Error("objdump printed no @plt label")
	}
}

func TestProgAgainstNMAndObjdump(t *testing.T) {
	need(t, "nm", "objdump")
	for _, flags := range [][]string{nil, {"-fcf-protection=full"}, {"-Wl,-z,now"}} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			p := buildProg(t, flags...)
			tab, err := Open(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstNM(t, tab, nmFuncs(t, p, false))
			checkPLT(t, tab, p)
			for _, name := range []string{"fib", "deep", "twice_plus_one", "main", "qsort@plt"} {
				found := false
				for _, s := range tab.Symbols() {
					found = found || s.Name == name
				}
				if !found {
					t.Errorf("no %s", name)
				}
			}
		})
	}
}

func TestLibcAgainstNM(t *testing.T) {
	need(t, "nm", "objdump")
	libc := ""
	for _, p := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"} {
		if _, err := os.Stat(p); err == nil {
			libc = p
			break
		}
	}
	if libc == "" {
		t.Skip("no libc.so.6")
	}
	tab, err := Open(libc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstNM(t, tab, nmFuncs(t, libc, true))
	checkPLT(t, tab, libc)
	if testing.AllocsPerRun(100, func() { tab.Lookup(tab.syms[len(tab.syms)/2].Addr + 1) }) != 0 {
		t.Error("Lookup allocates")
	}
}

// TestLinkAddr maps a file as the kernel does (each PT_LOAD at a page
// boundary of a random base, pgoff its page-aligned file offset) and
// undoes the bias for every symbol.
func TestLinkAddr(t *testing.T) {
	p := buildProg(t)
	tab, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const base = 0x55d9c2f00000
	for _, s := range tab.Symbols() {
		for _, sg := range tab.Segments {
			if s.Addr < sg.Vaddr || s.Addr >= sg.Vaddr+sg.Filesz {
				continue
			}
			start, pgoff := base+sg.Vaddr&^0xfff, sg.Off&^0xfff
			got, ok := tab.LinkAddr(start, pgoff, base+s.Addr)
			if !ok || got != s.Addr {
				t.Errorf("%s: run-time %#x -> %#x %v, want %#x", s.Name, base+s.Addr, got, ok, s.Addr)
			}
		}
	}
}

// TestDemangle: a C++ name (given by an asm label) is demangled as c++filt
// does.
func TestDemangle(t *testing.T) {
	need(t, "gcc", "c++filt")
	dir := t.TempDir()
	src := filepath.Join(dir, "m.c")
	os.WriteFile(src, []byte(`int f(int x) __asm__("_ZN3foo3barEi"); int f(int x) { return x; }
int g(int x) __asm__("_ZN3foo3bazIiEEvT_"); int g(int x) { return x+1; }
int main(void) { return f(0)+g(0); }`), 0o600)
	out := filepath.Join(dir, "m")
	if b, err := exec.Command("gcc", "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, b)
	}
	tab, err := Open(out, Options{Demangle: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, mangled := range []string{"_ZN3foo3barEi", "_ZN3foo3bazIiEEvT_"} {
		want, err := exec.Command("c++filt", mangled).Output()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range tab.Symbols() {
			found = found || s.Name == strings.TrimSpace(string(want))
		}
		if !found {
			t.Errorf("no %q (c++filt of %s) in %v", strings.TrimSpace(string(want)), mangled, tab.Symbols())
		}
	}
}

func TestFinder(t *testing.T) {
	p := buildProg(t)
	f, _ := elf.Open(p)
	id := BuildID(f)
	f.Close()
	if len(id) == 0 {
		t.Fatal("gcc's output has no build-id")
	}
	// perf's cache layout: DIR/.build-id/xx/rest -> directory with "elf".
	cache := t.TempDir()
	h := strings.ToLower(strings.TrimSpace(func() string {
		s := ""
		for _, b := range id {
			s += strconv.FormatUint(uint64(b)|0x100, 16)[1:]
		}
		return s
	}()))
	d := filepath.Join(cache, ".build-id", h[:2], h[2:])
	os.MkdirAll(d, 0o700)
	b, _ := os.ReadFile(p)
	os.WriteFile(filepath.Join(d, "elf"), b, 0o600)

	fd := Finder{BuildIDDirs: []string{cache}}
	if got, err := fd.Find("/nonexistent/prog", id); err != nil || got != filepath.Join(d, "elf") {
		t.Errorf("build-id cache: %q %v", got, err)
	}
	// Under a sysroot.
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "opt"), 0o700)
	os.WriteFile(filepath.Join(root, "opt", "prog"), b, 0o600)
	fd = Finder{Sysroot: root}
	if got, err := fd.Find("/opt/prog", id); err != nil || got != filepath.Join(root, "opt", "prog") {
		t.Errorf("sysroot: %q %v", got, err)
	}
	// Wrong build-id: not taken, and said so.
	if _, err := fd.Find("/opt/prog", []byte{1, 2, 3, 4}); err == nil || !strings.Contains(err.Error(), "its build-id is") {
		t.Errorf("wrong build-id: %v", err)
	}
	if _, err := fd.Find("/missing", nil); err == nil || !strings.Contains(err.Error(), "/missing") {
		t.Errorf("missing file: %v", err)
	}
}
