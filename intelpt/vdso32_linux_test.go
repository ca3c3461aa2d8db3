//go:build linux

package intelpt

import (
	"bytes"
	"debug/elf"
	"testing"
)

// TestReadVDSO32: the 32-bit vDSO read from a stopped minimal i386
// program is an ELF32 i386 image with a build-id, exporting the 32-bit
// vDSO's entry points (__kernel_vsyscall, __vdso_clock_gettime), and not
// the 64-bit one; ReadVDSOFor finds both by build-id. (ptsynth's
// TestFlow32BitProgram checks it byte for byte against the [vdso] of a
// real gcc -m32 program, read with ptrace.)
func TestReadVDSO32(t *testing.T) {
	img, id, err := ReadVDSO32()
	if err != nil {
		t.Skipf("no 32-bit vDSO here: %v", err)
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	if f.Class != elf.ELFCLASS32 || f.Machine != elf.EM_386 || len(id) == 0 {
		t.Errorf("class %v machine %v build-id %x", f.Class, f.Machine, id)
	}
	syms, _ := f.DynamicSymbols()
	have := map[string]bool{}
	for _, s := range syms {
		have[s.Name] = true
	}
	for _, n := range []string{"__kernel_vsyscall", "__vdso_clock_gettime"} {
		if !have[n] {
			t.Errorf("32-bit vDSO lacks %s (has %d symbols)", n, len(syms))
		}
	}
	img64, id64, err := ReadVDSO()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(id, id64) {
		t.Error("the 32-bit and 64-bit vDSOs have the same build-id")
	}
	if got, err := ReadVDSOFor(id); err != nil || !bytes.Equal(got, img) {
		t.Errorf("ReadVDSOFor(32-bit id): %v", err)
	}
	if got, err := ReadVDSOFor(id64); err != nil || !bytes.Equal(got, img64) {
		t.Errorf("ReadVDSOFor(64-bit id): %v", err)
	}
	if _, err := ReadVDSOFor([]byte{1, 2, 3}); err == nil {
		t.Error("ReadVDSOFor(unknown id): no error")
	}
}
