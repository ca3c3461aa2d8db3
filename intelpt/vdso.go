package intelpt

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"strconv"
	"strings"

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
	maps, err := os.ReadFile("/proc/self/maps")
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
			return nil, nil, fmt.Errorf("intelpt: vdso: bad /proc/self/maps line %q", sc.Text())
		}
		break
	}
	if end == 0 {
		return nil, nil, fmt.Errorf("intelpt: vdso: no [vdso] mapping in /proc/self/maps")
	}
	mem, err := os.Open("/proc/self/mem")
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
