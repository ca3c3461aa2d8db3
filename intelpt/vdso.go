package intelpt

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/iotap/iotap/intelpt/symtab"
)

// VDSOName is the file name perf's mmap records give the vDSO.
const VDSOName = "[vdso]"

// ReadVDSO returns this process's vDSO image (the ELF file the kernel
// maps into every 64-bit process: the same bytes for all of them under
// one kernel) and its build-id, read from /proc/self/mem at the [vdso]
// line of /proc/self/maps. `iotap pt capture` saves it so that traces
// that run through it (clock_gettime, gettimeofday, time, getcpu) decode
// elsewhere. It fails where there is no /proc (not Linux).
func ReadVDSO() (image, buildID []byte, err error) {
	return readProcVDSO("self")
}

// VDSO32Name is the name perf's build-id table gives the vDSO of 32-bit
// processes (a different image from the 64-bit one, mapped below 4 GiB);
// mapped_files.json uses it too.
const VDSO32Name = "[vdso32]"

// IsVDSO32 reports whether a [vdso] mapping is a 32-bit process's: the
// kernel maps the 64-bit vDSO near the top of the 47-bit user space and
// the 32-bit one below 4 GiB.
func IsVDSO32(m *Mapping) bool { return m.File == VDSOName && m.End <= 1<<32 }

// ReadVDSOFor returns this machine's vDSO image whose build-id is
// buildID: the 64-bit one (ReadVDSO) or the 32-bit one (ReadVDSO32, read
// once), or an error saying neither is.
func ReadVDSOFor(buildID []byte) ([]byte, error) {
	img, id, err := ReadVDSO()
	if err == nil && bytes.Equal(id, buildID) {
		return img, nil
	}
	img32, id32, err32 := ReadVDSO32()
	if err32 == nil && bytes.Equal(id32, buildID) {
		return img32, nil
	}
	return nil, fmt.Errorf("intelpt: vdso: no vDSO of this machine has build-id %x (64-bit: %x %v; 32-bit: %x %v)", buildID, id, err, id32, err32)
}

var vdso32 struct {
	once    sync.Once
	img, id []byte
	err     error
}

// ReadVDSO32 returns the vDSO the running kernel maps into 32-bit
// processes, and its build-id: a minimal i386 program (written to a
// temporary file) is started, stopped by ptrace at its exec, its [vdso]
// read from /proc/PID/mem, and killed. It needs the kernel's 32-bit
// emulation (CONFIG_IA32_EMULATION, not disabled by ia32_emulation=0);
// the result is kept for the process's life.
func ReadVDSO32() (image, buildID []byte, err error) {
	vdso32.once.Do(func() { vdso32.img, vdso32.id, vdso32.err = readVDSO32() })
	return vdso32.img, vdso32.id, vdso32.err
}

// readProcVDSO reads the [vdso] of process pid ("self" or a number).
func readProcVDSO(pid string) (image, buildID []byte, err error) {
	maps, err := os.ReadFile("/proc/" + pid + "/maps")
	if err != nil {
		return nil, nil, fmt.Errorf("intelpt: vdso: %w", err)
	}
	var start, end uint64
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[5] != VDSOName {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			break
		}
		start, err = strconv.ParseUint(lo, 16, 64)
		if err == nil {
			end, err = strconv.ParseUint(hi, 16, 64)
		}
		if err != nil || end <= start || end-start > 1<<20 {
			return nil, nil, fmt.Errorf("intelpt: vdso: bad /proc/%s/maps line %q", pid, sc.Text())
		}
		break
	}
	if end == 0 {
		return nil, nil, fmt.Errorf("intelpt: vdso: no [vdso] mapping in /proc/%s/maps", pid)
	}
	mem, err := os.Open("/proc/" + pid + "/mem")
	if err != nil {
		return nil, nil, fmt.Errorf("intelpt: vdso: %w", err)
	}
	defer mem.Close()
	image = make([]byte, end-start)
	if _, err := mem.ReadAt(image, int64(start)); err != nil {
		return nil, nil, fmt.Errorf("intelpt: vdso: reading %#x-%#x: %w", start, end, err)
	}
	f, err := elf.NewFile(bytes.NewReader(image))
	if err != nil {
		return nil, nil, fmt.Errorf("intelpt: vdso: %w", err)
	}
	return image, symtab.BuildID(f), nil
}
