//go:build linux

package intelpt

import (
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyVDSO: what `pt capture` saves of the vDSO (always, without
// --copy-binaries) is an ELF file whose dynamic symbols objdump lists
// (the vDSO's clock_gettime), stored by its build-id, mode 0600; other
// files are not copied.
func TestCopyVDSO(t *testing.T) {
	sb := &Sideband{Records: []SidebandRecord{
		{Type: PerfRecordMmap2, PID: 7, TID: 7, Addr: 0x7ffff7fc1000, Len: 0x2000, Prot: 5, Filename: VDSOName},
		{Type: PerfRecordMmap2, PID: 7, TID: 7, Addr: 0x400000, Len: 0x1000, Prot: 5, Filename: "/bin/true"},
	}}
	files := MappedFiles(sb)
	dir := t.TempDir()
	if err := CopyVDSO(dir, files); err != nil {
		t.Fatal(err)
	}
	var vdso *MappedFile
	for i := range files {
		switch {
		case files[i].Path == VDSOName:
			vdso = &files[i]
		case files[i].Copy != "":
			t.Errorf("%s copied without --copy-binaries", files[i].Path)
		}
	}
	if vdso == nil || vdso.Copy == "" || vdso.Error != "" || len(vdso.BuildID) != 40 {
		t.Fatalf("vdso entry %+v (all %+v)", vdso, files)
	}
	p := filepath.Join(dir, vdso.Copy)
	if !strings.HasSuffix(p, filepath.Join(".build-id", vdso.BuildID[:2], vdso.BuildID[2:])) {
		t.Errorf("copy at %s", p)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", st, err)
	}
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Skip("objdump not installed")
	}
	out, err := exec.Command("objdump", "-T", p).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "clock_gettime") {
		t.Errorf("objdump -T %s: %v\n%s", p, err, out)
	}
	// again: the same build-id is the same file, kept
	if err := CopyVDSO(dir, files); err != nil || vdso.Error != "" {
		t.Errorf("second copy: %v %s", err, vdso.Error)
	}
}

// TestCopyVDSO32: a capture whose sideband maps both vDSOs (a 64-bit and
// a 32-bit process: the 32-bit one below 4 GiB) lists both in
// mapped_files.json, the 32-bit one as [vdso32] (perf's name) with its
// own build-id, saves both by build-id, and the address spaces of the
// capture directory's sideband give each [vdso] mapping its own build-id
// (BuildIDTable), so that a decoder finds each copy: objdump reads the
// 32-bit copy as elf32-i386 with __kernel_vsyscall.
func TestCopyVDSO32(t *testing.T) {
	if _, _, err := ReadVDSO32(); err != nil {
		t.Skipf("no 32-bit vDSO here: %v", err)
	}
	sb := &Sideband{Records: []SidebandRecord{
		{Type: PerfRecordMmap2, PID: 7, TID: 7, Addr: 0x7ffff7fc1000, Len: 0x2000, Prot: 5, Filename: VDSOName},
		{Type: PerfRecordMmap2, PID: 8, TID: 8, Addr: 0xf7f00000, Len: 0x2000, Prot: 5, Filename: VDSOName},
	}}
	files := MappedFiles(sb)
	dir := t.TempDir()
	if err := CopyVDSO(dir, files); err != nil {
		t.Fatal(err)
	}
	byPath := map[string]MappedFile{}
	for _, f := range files {
		byPath[f.Path] = f
	}
	v64, v32 := byPath[VDSOName], byPath[VDSO32Name]
	if len(files) != 2 || v64.Copy == "" || v32.Copy == "" || v64.BuildID == v32.BuildID || v32.Error != "" {
		t.Fatalf("mapped files %+v", files)
	}
	sb.BuildIDs = BuildIDTable(files)
	as := sb.AddressSpaces()
	for pid, want := range map[int32]string{7: v64.BuildID, 8: v32.BuildID} {
		if m := as.Process(pid).Mappings; len(m) != 1 || hex.EncodeToString(m[0].BuildID) != want {
			t.Errorf("pid %d: mappings %+v, want build-id %s", pid, m, want)
		}
	}
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Skip("objdump not installed")
	}
	out, err := exec.Command("objdump", "-T", filepath.Join(dir, v32.Copy)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "elf32-i386") || !strings.Contains(string(out), "__kernel_vsyscall") {
		t.Errorf("objdump -T %s: %v\n%s", v32.Copy, err, out)
	}
}
