package intelpt

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinyModule is testdata/tiny-module.o: 'gcc -O1 -c' of
// "extern int ext(int); int f(int x){ return ext(x)+1; }", an x86-64
// relocatable object like a .ko, whose .text has one R_X86_64_PLT32
// relocation (the call of ext).
func tinyModule(t testing.TB) []byte {
	b, err := os.ReadFile("testdata/tiny-module.o")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadKO runs LoadModuleKO on the object b, its .text at a kernel
// address, every undefined symbol resolved.
func loadKO(t testing.TB, b []byte) ([]KernelSection, error) {
	p := filepath.Join(t.TempDir(), "m.ko")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return LoadModuleKO(p, "m", map[string]uint64{".text": 0xffffffffc0001000},
		func(string) (uint64, bool) { return 0xffffffff81000000, true })
}

// TestLoadModuleKORelocation: the call's PLT32 relocation is applied
// (S + A - P, against LoadModuleKO's own addresses); a relocation whose
// offset wraps around 64 bits (a damaged or hostile .ko) is an error,
// not an index panic.
func TestLoadModuleKORelocation(t *testing.T) {
	b := tinyModule(t)
	secs, err := loadKO(t, b)
	if err != nil || len(secs) != 1 {
		t.Fatalf("LoadModuleKO: %v %v", secs, err)
	}
	// The call at .text+4 (e8 rel32): its rel32 at +5 = S - 4 - P.
	got := int32(binary.LittleEndian.Uint32(secs[0].Data[5:]))
	var s, p uint64 = 0xffffffff81000000, 0xffffffffc0001000 + 5
	if want := int32(uint32(s - 4 - p)); got != want {
		t.Errorf("rel32 %#x, want %#x", got, want)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	rela := f.Section(".rela.text")
	if rela == nil {
		t.Fatal("no .rela.text")
	}
	bad := bytes.Clone(b)
	binary.LittleEndian.PutUint64(bad[rela.Offset:], ^uint64(1)) // r_offset 2^64-2: +4 wraps
	if _, err := loadKO(t, bad); err == nil || !strings.Contains(err.Error(), "relocation past the section") {
		t.Fatalf("wrapped relocation offset: %v, want an error", err)
	}
}

// FuzzLoadModuleKO: a kernel module given to pt calls/pt flow --kernel
// (a user's file) never panics the loader.
func FuzzLoadModuleKO(f *testing.F) {
	f.Add(tinyModule(f))
	f.Fuzz(func(t *testing.T, b []byte) {
		loadKO(t, b)
	})
}
