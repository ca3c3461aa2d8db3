//go:build linux

package intelpt

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/iotap/iotap/internal/unix"
)

// i386Exit is a minimal static i386 ELF executable that calls exit(0)
// (it never runs that far: it is stopped at its exec).
func i386Exit() []byte {
	le := binary.LittleEndian
	const base, hdr = 0x08048000, 52 + 32
	code := []byte{0xb8, 1, 0, 0, 0, 0x31, 0xdb, 0xcd, 0x80} // mov eax,1; xor ebx,ebx; int 0x80
	b := []byte{0x7f, 'E', 'L', 'F', 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	b = le.AppendUint16(b, 2)        // ET_EXEC
	b = le.AppendUint16(b, 3)        // EM_386
	b = le.AppendUint32(b, 1)        // EV_CURRENT
	b = le.AppendUint32(b, base+hdr) // entry
	b = le.AppendUint32(b, 52)       // phoff
	b = le.AppendUint32(b, 0)        // shoff
	b = le.AppendUint32(b, 0)        // flags
	b = le.AppendUint16(b, 52)       // ehsize
	b = le.AppendUint16(b, 32)       // phentsize
	b = le.AppendUint16(b, 1)        // phnum
	b = le.AppendUint16(b, 40)       // shentsize
	b = le.AppendUint16(b, 0)        // shnum
	b = le.AppendUint16(b, 0)        // shstrndx
	size := uint32(hdr + len(code))
	b = le.AppendUint32(b, 1) // PT_LOAD
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, base)
	b = le.AppendUint32(b, base)
	b = le.AppendUint32(b, size)
	b = le.AppendUint32(b, size)
	b = le.AppendUint32(b, 5) // R+X
	b = le.AppendUint32(b, 0x1000)
	return append(b, code...)
}

func readVDSO32() (image, buildID []byte, err error) {
	dir, err := os.MkdirTemp("", "iotap-vdso32-")
	if err != nil {
		return nil, nil, fmt.Errorf("intelpt: vdso32: %w", err)
	}
	defer os.RemoveAll(dir)
	exe := filepath.Join(dir, "exit32")
	if err := os.WriteFile(exe, i386Exit(), 0o700); err != nil {
		return nil, nil, fmt.Errorf("intelpt: vdso32: %w", err)
	}
	p, err := unix.StartStopped(exe)
	if err != nil {
		return nil, nil, fmt.Errorf("intelpt: vdso32: starting a 32-bit program (does the kernel run 32-bit code? CONFIG_IA32_EMULATION): %w", err)
	}
	defer unix.KillWait(p)
	img, id, err := readProcVDSO(strconv.Itoa(p.Pid))
	if err != nil {
		return nil, nil, fmt.Errorf("intelpt: vdso32: %w", err)
	}
	return img, id, nil
}
