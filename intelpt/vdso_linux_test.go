//go:build linux

package intelpt

import (
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
		{Type: PerfRecordMmap2, PID: 7, TID: 7, Addr: 0x7fff0000, Len: 0x2000, Prot: 5, Filename: VDSOName},
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
