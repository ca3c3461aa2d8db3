package x86

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// The lab kernel (a bzImage, from the shared test data; absent on CI).
const bzImagePath = "../../../shared/vm/bzImage"

func readBzImage(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(bzImagePath)
	if err != nil {
		t.Skipf("lab kernel not present: %v", err)
	}
	if len(b) < 0x300 || string(b[0x202:0x206]) != "HdrS" {
		t.Fatalf("%s: not a bzImage (no HdrS boot header)", bzImagePath)
	}
	return b
}

// extractVmlinux does what the kernel's scripts/extract-vmlinux does: find
// each compressed-stream magic in the image, decompress from there, and keep
// the first result that is an ELF file. The lab kernel is built with
// CONFIG_KERNEL_GZIP (kernel.config), so gzip's 1f 8b 08 is the magic;
// another compressor is reported, not guessed.
func extractVmlinux(t *testing.T, img []byte) []byte {
	t.Helper()
	magic := []byte{0x1f, 0x8b, 0x08}
	for off := 0; ; {
		k := bytes.Index(img[off:], magic)
		if k < 0 {
			break
		}
		off += k
		zr, err := gzip.NewReader(bytes.NewReader(img[off:]))
		if err == nil {
			zr.Multistream(false)
			var head [4]byte
			if _, err := io.ReadFull(zr, head[:]); err == nil && string(head[:]) == "\x7fELF" {
				rest, err := io.ReadAll(zr)
				if err != nil && err != io.ErrUnexpectedEOF {
					t.Fatalf("gunzip at %#x: %v", off, err)
				}
				return append(head[:], rest...)
			}
		}
		off++
	}
	for _, m := range []struct{ name, magic string }{
		{"xz", "\xfd7zXZ\x00"}, {"zstd", "\x28\xb5\x2f\xfd"}, {"lzma", "\x5d\x00\x00\x00"},
		{"bzip2", "BZh"}, {"lzo", "\x89LZO"}, {"lz4", "\x02\x21\x4c\x18"},
	} {
		if bytes.Contains(img, []byte(m.magic)) {
			t.Logf("bzImage contains a %s magic; only gzip payloads are extracted", m.name)
		}
	}
	t.Fatal("no gzip-compressed ELF payload in the bzImage")
	return nil
}

// TestObjdumpKernel: every instruction of the lab kernel's vmlinux
// (executable sections, 64-bit).
func TestObjdumpKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("whole kernel: not in -short")
	}
	needObjdump(t)
	img := readBzImage(t)
	vmlinux := extractVmlinux(t, img)
	p := filepath.Join(t.TempDir(), "vmlinux")
	if err := os.WriteFile(p, vmlinux, 0o600); err != nil {
		t.Fatal(err)
	}
	compareELF(t, p)
}

// TestObjdumpKernelSetup16: the bzImage's real-mode setup code (16-bit code
// compiled with -m16: full of 66 and 67 prefixes), sectors 1..setup_sects.
func TestObjdumpKernelSetup16(t *testing.T) {
	img := readBzImage(t)
	sects := int(img[0x1f1])
	if sects == 0 {
		sects = 4
	}
	end := (sects + 1) * 512
	if end > len(img) {
		t.Fatalf("setup_sects %d beyond the image", sects)
	}
	// The setup code starts at 0x200 with a 2-byte jump over the header;
	// objdump is given the code from there (data is compared too: it is
	// still "code" to objdump, and lengths must agree on it).
	t.Logf("setup: %d sectors, boot protocol %#x", sects, binary.LittleEndian.Uint16(img[0x206:]))
	compareRaw(t, "bzImage setup (16-bit)", img[0x200:end], Mode16)
}
