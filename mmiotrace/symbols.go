package mmiotrace

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/iotap/iotap/ksym"
	"github.com/klauspost/compress/gzip"
)

// Names of the kernel symbol files in a bundle, and where they are read.
const (
	BundleKallsyms = "kallsyms.txt"
	BundleModules  = "modules.txt"
	ProcKallsyms   = "/proc/kallsyms"
	ProcModules    = "/proc/modules"
)

// maxSymbolFile bounds a kallsyms or modules file read from a bundle
// (a distribution kernel's kallsyms is about 15 MB).
const maxSymbolFile = 256 << 20

// LoadSymbols reads the kernel symbols that name access PCs from path: a
// bundle (.tar.gz holding kallsyms.txt and, optionally, modules.txt) or
// a kallsyms text file (such as a copy of /proc/kallsyms). An error
// wrapping ksym.ErrHidden comes with a usable (empty) table.
func LoadSymbols(path string) (*ksym.Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mmiotrace: symbols: %w", err)
	}
	defer f.Close()
	var head [2]byte
	n, _ := io.ReadFull(f, head[:])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("mmiotrace: symbols: %w", err)
	}
	if n == 2 && head[0] == 0x1f && head[1] == 0x8b {
		return loadBundleSymbols(path, f)
	}
	t, err := ksym.Load(io.LimitReader(f, maxSymbolFile), nil)
	if err != nil {
		return t, fmt.Errorf("mmiotrace: symbols %s: %w", path, err)
	}
	return t, nil
}

func loadBundleSymbols(path string, f io.Reader) (*ksym.Table, error) {
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("mmiotrace: symbols %s: %w", path, err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var kall, mods []byte
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("mmiotrace: symbols %s: %w", path, err)
		}
		name := h.Name[strings.LastIndexByte(h.Name, '/')+1:]
		if name != BundleKallsyms && name != BundleModules {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxSymbolFile))
		if err != nil {
			return nil, fmt.Errorf("mmiotrace: symbols %s: %s: %w", path, h.Name, err)
		}
		if name == BundleKallsyms {
			kall = data
		} else {
			mods = data
		}
	}
	if kall == nil {
		return nil, fmt.Errorf("mmiotrace: symbols %s: the bundle has no %s (written by an older iotap, or /proc/kallsyms was unreadable at capture)", path, BundleKallsyms)
	}
	var mr io.Reader
	if mods != nil {
		mr = bytes.NewReader(mods)
	}
	t, err := ksym.Load(bytes.NewReader(kall), mr)
	if err != nil {
		if errors.Is(err, ksym.ErrHidden) {
			return t, fmt.Errorf("mmiotrace: symbols %s: %w", path, err)
		}
		return nil, fmt.Errorf("mmiotrace: symbols %s: %w", path, err)
	}
	return t, nil
}

// KernelRecordsPC reports whether the running kernel was booted with
// mmiotrace.trace_pc=1, the only way to make mmiotrace record the PC of
// each access (the parameter is not writable at run time).
func KernelRecordsPC() bool {
	b, err := os.ReadFile("/proc/cmdline")
	if err != nil {
		return false
	}
	for _, f := range strings.Fields(string(b)) {
		switch f {
		case "mmiotrace.trace_pc=1", "mmiotrace.trace_pc=y", "mmiotrace.trace_pc=Y", "mmiotrace.trace_pc":
			return true
		}
	}
	return false
}

// LoadSymbolsWarn is LoadSymbols where kernel addresses hidden from the
// reader (ksym.ErrHidden) are a warning, passed to warn, and not an
// error: the table is then empty and the PCs stay unnamed.
func LoadSymbolsWarn(path string, warn func(string)) (*ksym.Table, error) {
	tab, err := LoadSymbols(path)
	if err != nil && errors.Is(err, ksym.ErrHidden) && tab != nil {
		warn(err.Error() + ": PCs stay unnamed")
		return tab, nil
	}
	return tab, err
}
