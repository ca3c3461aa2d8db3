package doctor

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// kconfig is the running kernel's configuration, when it can be read.
type kconfig struct {
	source string            // file it came from, "" when unknown
	opts   map[string]string // CONFIG_X -> y, m, value
}

// loadKconfig reads /proc/config.gz or /boot/config-RELEASE below root.
func loadKconfig(root, release string) kconfig {
	try := []string{filepath.Join(root, "proc/config.gz")}
	if release != "" {
		try = append(try, filepath.Join(root, "boot", "config-"+release))
	}
	for _, p := range try {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if strings.HasSuffix(p, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				continue
			}
			if b, err = io.ReadAll(io.LimitReader(zr, 16<<20)); err != nil {
				continue
			}
		}
		return kconfig{source: p, opts: parseKconfig(b)}
	}
	return kconfig{}
}

func parseKconfig(b []byte) map[string]string {
	m := make(map[string]string)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "CONFIG_") {
			m[k] = v
		}
	}
	return m
}

// state returns "y", "m", "n" (known to be off) or "" (unknown).
func (k kconfig) state(opt string) string {
	if k.opts == nil {
		return ""
	}
	if v, ok := k.opts[opt]; ok {
		return v
	}
	return "n"
}
