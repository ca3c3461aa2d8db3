package x86

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

func skipMissing(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not present: %v", path, err)
	}
}

// TestObjdumpLibc: every instruction of libc.so.6's executable sections.
func TestObjdumpLibc(t *testing.T) {
	const p = "/lib/x86_64-linux-gnu/libc.so.6"
	skipMissing(t, p)
	compareELF(t, p)
}

// TestObjdumpLdSo: every instruction of the dynamic loader.
func TestObjdumpLdSo(t *testing.T) {
	p, err := filepath.EvalSymlinks("/lib64/ld-linux-x86-64.so.2")
	if err != nil {
		t.Skipf("ld-linux-x86-64.so.2: %v", err)
	}
	compareELF(t, p)
}

// TestObjdumpQemu: a large C program (CI installs qemu-system-x86).
func TestObjdumpQemu(t *testing.T) {
	if testing.Short() {
		t.Skip("large binary: not in -short")
	}
	const p = "/usr/bin/qemu-system-x86_64"
	skipMissing(t, p)
	compareELF(t, p)
}

// TestObjdump32: real 32-bit code, when the machine has some (valgrind's
// x86 tools are static i386 executables).
func TestObjdump32(t *testing.T) {
	ps, _ := filepath.Glob("/usr/libexec/valgrind/memcheck-x86-linux")
	if len(ps) == 0 {
		t.Skip("no 32-bit x86 executable on this machine")
	}
	compareELF(t, ps[0])
}

// randomCode is deterministic random bytes, part uniform and part built
// from fragments (prefixes, escapes, VEX/EVEX headers, ModRM/SIB) so that the
// rarer encodings are hit often.
func randomCode(seed int64, n int) []byte {
	r := rand.New(rand.NewSource(seed))
	b := make([]byte, 0, n+32)
	frags := [][]byte{
		{0x66}, {0x67}, {0xF2}, {0xF3}, {0xF0}, {0x2E}, {0x64}, {0x48}, {0x41}, {0x4C},
		{0x0F}, {0x0F, 0x38}, {0x0F, 0x3A}, {0x0F, 0x01}, {0x0F, 0x0F}, {0x0F, 0xAE}, {0x0F, 0xC7},
		{0xC5}, {0xC4}, {0x62}, {0x8F}, {0xF6}, {0xF7}, {0xFF}, {0xE8}, {0xE9}, {0xEB}, {0x0F, 0x84},
		{0x9A}, {0xEA}, {0xA0}, {0xA1}, {0xA2}, {0xA3}, {0xC8}, {0xC2}, {0xCA}, {0xB8}, {0x68}, {0xE3},
		{0x0F, 0x78}, {0x0F, 0x22},
	}
	for len(b) < n {
		if r.Intn(3) == 0 {
			f := frags[r.Intn(len(frags))]
			b = append(b, f...)
			switch f[0] {
			case 0xC5, 0xC4, 0x62, 0x8F: // header bytes with valid-looking maps
				b = append(b, byte(r.Intn(256))|0xC0&byte(r.Intn(256)|0x80))
			}
		} else {
			b = append(b, byte(r.Intn(256)))
		}
	}
	return b[:n]
}

func randomSize() int {
	if testing.Short() {
		return 256 << 10
	}
	return 2 << 20
}

func TestObjdumpRandom64(t *testing.T) {
	compareRaw(t, "random 64-bit", randomCode(64, randomSize()), Mode64)
}
func TestObjdumpRandom32(t *testing.T) {
	compareRaw(t, "random 32-bit", randomCode(32, randomSize()), Mode32)
}
func TestObjdumpRandom16(t *testing.T) {
	compareRaw(t, "random 16-bit", randomCode(16, randomSize()), Mode16)
}

// TestObjdumpSeaBIOS32: SeaBIOS (a dependency of qemu-system-x86, so CI has
// it) is compiled for 32-bit protected mode; the image also holds its 16-bit
// entry code and data, compared as 32-bit bytes like everything objdump -m
// i386 shows.
func TestObjdumpSeaBIOS32(t *testing.T) {
	const p = "/usr/share/seabios/bios-256k.bin"
	skipMissing(t, p)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	compareRaw(t, "SeaBIOS (32-bit)", b, Mode32)
}

// TestObjdumpVGABIOS16: SeaVGABIOS is 16-bit code compiled from C (gcc
// -m16): operand- and address-size prefixes everywhere.
func TestObjdumpVGABIOS16(t *testing.T) {
	ps, _ := filepath.Glob("/usr/share/seabios/vgabios-stdvga.bin")
	if len(ps) == 0 {
		t.Skip("no SeaVGABIOS image (package seabios)")
	}
	b, err := os.ReadFile(ps[0])
	if err != nil {
		t.Fatal(err)
	}
	compareRaw(t, "SeaVGABIOS (16-bit)", b, Mode16)
}
