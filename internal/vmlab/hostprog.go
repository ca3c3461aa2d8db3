package vmlab

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// HostProgram returns Machine.Binaries entries that put the dynamically
// linked host program path into the guest at the same path, with every
// shared library ldd lists for it (and the program interpreter) at the
// path the host has it. The guest has only busybox otherwise: this is how
// a lab test runs a host tool such as perf against the lab kernel. The
// test is skipped when the program is not installed or ldd cannot list
// its libraries.
func HostProgram(t testing.TB, path string) map[string]string {
	t.Helper()
	p, err := exec.LookPath(path)
	if err != nil {
		t.Skipf("vmlab: %s not installed on the host: %v", path, err)
	}
	p, err = filepath.EvalSymlinks(p)
	if err != nil {
		t.Skipf("vmlab: %v", err)
	}
	out, err := exec.Command("ldd", p).Output()
	if err != nil {
		t.Skipf("vmlab: ldd %s: %v", p, err)
	}
	bins, err := parseLDD(out)
	if err != nil {
		t.Fatalf("vmlab: ldd %s: %v", p, err)
	}
	bins[p] = p
	return bins
}

// parseLDD maps each library of ldd's output to itself (guest path = host
// path). Lines are "soname => /path (addr)", "/lib64/ld-linux-x86-64.so.2
// (addr)" for the interpreter, and "linux-vdso.so.1 (addr)" for the vDSO,
// which the kernel provides.
func parseLDD(out []byte) (map[string]string, error) {
	bins := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		var lib string
		switch {
		case len(f) >= 3 && f[1] == "=>":
			if f[2] == "not" {
				return nil, fmt.Errorf("library %s not found", f[0])
			}
			lib = f[2]
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			lib = f[0]
		default:
			continue
		}
		bins[lib] = lib
	}
	return bins, sc.Err()
}
