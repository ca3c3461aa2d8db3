package intelpt_test

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

var anyASID = intelpt.ASID{CR3: intelpt.AnyASID, VMCS: intelpt.AnyASID}

// TestImageOverlap: a section added later wins where it overlaps older ones
// (libipt's pt_image_add), and reads cross adjacent sections.
func TestImageOverlap(t *testing.T) {
	im := intelpt.NewImage()
	if _, err := im.Add(bytes.Repeat([]byte{0xaa}, 16), 0x1000, anyASID, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := im.Add(bytes.Repeat([]byte{0xbb}, 4), 0x1004, anyASID, "b"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 20)
	n := im.Read(buf, 0x1000, anyASID)
	want := append(append(bytes.Repeat([]byte{0xaa}, 4), bytes.Repeat([]byte{0xbb}, 4)...), bytes.Repeat([]byte{0xaa}, 8)...)
	if n != 16 || !bytes.Equal(buf[:n], want) {
		t.Fatalf("read %d bytes % x, want % x", n, buf[:n], want)
	}
	if n := im.Read(buf, 0x0fff, anyASID); n != 0 {
		t.Errorf("read %d bytes before the image", n)
	}
	// address spaces: a section for CR3 1 is not visible in CR3 2
	if _, err := im.Add([]byte{0xcc}, 0x2000, intelpt.ASID{CR3: 1, VMCS: intelpt.AnyASID}, "c"); err != nil {
		t.Fatal(err)
	}
	if n := im.Read(buf[:1], 0x2000, intelpt.ASID{CR3: 2, VMCS: intelpt.AnyASID}); n != 0 {
		t.Errorf("CR3 2 sees the section of CR3 1")
	}
	if n := im.Read(buf[:1], 0x2000, intelpt.ASID{CR3: 1, VMCS: 7}); n != 1 || buf[0] != 0xcc {
		t.Errorf("CR3 1 does not see its section")
	}
}

// TestImageAddRaw checks ptxed's --raw file[:offset[-end]]:address syntax.
func TestImageAddRaw(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "code.bin")
	if err := os.WriteFile(file, []byte{0, 1, 2, 3, 4, 5, 6, 7}, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		spec string
		addr uint64
		data []byte
	}{
		{file + ":0x1000", 0x1000, []byte{0, 1, 2, 3, 4, 5, 6, 7}},
		{file + ":2:0x1000", 0x1000, []byte{2, 3, 4, 5, 6, 7}},
		{file + ":2-5:4096", 0x1000, []byte{2, 3, 4}},
		{file + ":0x2-0x4:010000", 010000, []byte{2, 3}},
	} {
		im := intelpt.NewImage()
		s, err := im.AddRaw(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		if s.Addr != c.addr || !bytes.Equal(s.Data, c.data) {
			t.Errorf("%s: section at %#x % x, want %#x % x", c.spec, s.Addr, s.Data, c.addr, c.data)
		}
	}
	for _, bad := range []string{file, file + ":", file + ":5-2:0x1000", file + ":8:0x1000", file + ":0-9:0x1000", filepath.Join(dir, "none") + ":0x1000"} {
		if _, err := intelpt.NewImage().AddRaw(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestImageAddELF loads a system binary and checks the sections against
// readelf's program headers (an independent parser) when readelf is there.
func TestImageAddELF(t *testing.T) {
	bin, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no 'true' binary")
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Skipf("%s is not ELF: %v", bin, err)
	}
	f.Close()
	im := intelpt.NewImage()
	secs, err := im.AddELF(bin)
	if err != nil {
		t.Fatal(err)
	}
	type seg struct{ vaddr, filesz uint64 }
	var got []seg
	for _, s := range secs {
		got = append(got, seg{s.Addr, uint64(len(s.Data))})
	}
	if _, err := exec.LookPath("readelf"); err != nil {
		t.Skip("readelf (binutils) not installed: cannot cross-check the segments")
	}
	out, err := exec.Command("readelf", "-lW", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []seg
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[0] != "LOAD" {
			continue
		}
		va, _ := strconv.ParseUint(strings.TrimPrefix(fs[2], "0x"), 16, 64)
		fsz, _ := strconv.ParseUint(strings.TrimPrefix(fs[4], "0x"), 16, 64)
		if fsz != 0 {
			want = append(want, seg{va, fsz})
		}
	}
	if len(got) != len(want) {
		t.Fatalf("segments %v, readelf %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("segment %d: %+v, readelf %+v", i, got[i], want[i])
		}
	}
	// with a base, the lowest segment moves there
	im2 := intelpt.NewImage()
	secs2, err := im2.AddELF(bin + ":0x400000")
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range secs2 {
		if w := want[i].vaddr - want[0].vaddr + 0x400000; s.Addr != w {
			t.Errorf("base 0x400000: segment %d at %#x, want %#x", i, s.Addr, w)
		}
	}
}
