package intelpt

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeCore writes an ELF64 core file (as /proc/kcore is: no sections,
// PT_LOAD segments at kernel virtual addresses) with a segment per
// (vaddr, data).
func writeCore(t *testing.T, segs map[uint64][]byte, order []uint64) string {
	t.Helper()
	le := binary.LittleEndian
	const ehsize, phsize = 64, 56
	h := make([]byte, ehsize)
	copy(h, "\x7fELF\x02\x01\x01")
	le.PutUint16(h[16:], 4)  // ET_CORE
	le.PutUint16(h[18:], 62) // EM_X86_64
	le.PutUint32(h[20:], 1)
	le.PutUint64(h[32:], ehsize) // phoff
	le.PutUint16(h[52:], ehsize)
	le.PutUint16(h[54:], phsize)
	le.PutUint16(h[56:], uint16(len(order)))
	off := uint64(ehsize + phsize*len(order))
	var ph, data []byte
	for _, va := range order {
		d := segs[va]
		p := make([]byte, phsize)
		le.PutUint32(p, 1) // PT_LOAD
		le.PutUint32(p[4:], 7)
		le.PutUint64(p[8:], off)
		le.PutUint64(p[16:], va)
		le.PutUint64(p[32:], uint64(len(d)))
		le.PutUint64(p[40:], uint64(len(d)))
		ph = append(ph, p...)
		data = append(data, d...)
		off += uint64(len(d))
	}
	p := filepath.Join(t.TempDir(), "kcore")
	if err := os.WriteFile(p, append(append(h, ph...), data...), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadKernelCore: from a core file laid out as /proc/kcore (the
// direct map and the kernel text as PT_LOAD segments), LoadKernel takes
// exactly the bytes of [_text, _etext) at their addresses; without the
// range, or when no segment holds it, it says why.
func TestLoadKernelCore(t *testing.T) {
	text := make([]byte, 0x1000)
	for i := range text {
		text[i] = byte(i * 7)
	}
	direct := bytes.Repeat([]byte{0xee}, 0x800)
	const ktext, dmap uint64 = 0xffffffff81000000, 0xffff888000000000
	core := writeCore(t, map[uint64][]byte{ktext: text, dmap: direct}, []uint64{dmap, ktext})
	k, err := LoadKernel(core, ktext+0x100, ktext+0x300)
	if err != nil {
		t.Fatal(err)
	}
	if k.Vmlinux || k.Slide != 0 || len(k.Sections) != 1 || k.Sections[0].Addr != ktext+0x100 || !bytes.Equal(k.Sections[0].Data, text[0x100:0x300]) {
		t.Fatalf("kernel %+v", k)
	}
	im := NewImage()
	if err := k.AddTo(im); err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	if n := im.Read(b[:], ktext+0x200, ASID{CR3: 0x1234, VMCS: AnyASID}); n != 4 || !bytes.Equal(b[:], text[0x200:0x204]) {
		t.Errorf("image at %#x: %x", ktext+0x200, b[:n])
	}
	if _, err := LoadKernel(core, 0, 0); err == nil || !strings.Contains(err.Error(), "text range is needed") {
		t.Errorf("no range: %v", err)
	}
	if _, err := LoadKernel(core, ktext+0x10000, ktext+0x20000); err == nil || !strings.Contains(err.Error(), "holds nothing") {
		t.Errorf("range outside: %v", err)
	}
}
