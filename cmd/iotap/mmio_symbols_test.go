package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const symLog = `VERSION 20070824
PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000
MAP 8.286086 1 0xfebc0000 0xff508fd9c0220000 0x20000 0xffffffff81700010 0
R 4 8.288891 1 0xfebc0008 0x80080783 0xffffffffc001041c 0
R 4 8.288892 1 0xfebc0008 0x80080783 0xffffffffc0010420 0
W 4 8.294406 1 0xfebc00d8 0xffffffff 0xffffffffc0010010 0
W 4 8.294407 1 0xfebc00d8 0xffffffff 0xffffffff81700020 0
R 4 8.294408 1 0xfebc0010 0x0 0x0 0
`

const symKallsyms = "ffffffff81700000 T pci_generic\nffffffffc0010000 t e1000_probe\t[e1000]\nffffffffc0010400 t e1000_reset_hw\t[e1000]\n"
const symModules = "e1000 163840 0 - Live 0xffffffffc0010000\n"

func writeSymBundle(t *testing.T, path, kallsyms, modules string) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for _, f := range []struct{ name, data string }{{"e1000.log", symLog}, {"kallsyms.txt", kallsyms}, {"modules.txt", modules}} {
		tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o600, Size: int64(len(f.data)), Typeflag: tar.TypeReg})
		tw.Write([]byte(f.data))
	}
	tw.Close()
	zw.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestMMIOSymbols(t *testing.T) {
	dir := t.TempDir()
	log, bundle := filepath.Join(dir, "e.log"), filepath.Join(dir, "b.tar.gz")
	os.WriteFile(log, []byte(symLog), 0o600)
	writeSymBundle(t, bundle, symKallsyms, symModules)

	out, e, code := runMMIO(t, "mmio", "read", "--json", "--symbols", bundle, log)
	if code != 0 {
		t.Fatalf("read --json: exit %d: %s", code, e)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var j struct{ Kind, Func string }
		if err := json.Unmarshal([]byte(l), &j); err != nil {
			t.Fatal(err)
		}
		if j.Kind == "mmio_access" || j.Kind == "mmio_map" {
			got = append(got, j.Func)
		}
	}
	want := []string{"pci_generic+0x10", "e1000_reset_hw+0x1c [e1000]", "e1000_reset_hw+0x20 [e1000]", "e1000_probe+0x10 [e1000]", "pci_generic+0x20", ""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("funcs:\n got %q\nwant %q", got, want)
	}

	// Text: the name after a tab on the lines with a PC.
	out, _, code = runMMIO(t, "mmio", "read", "--symbols", bundle, log)
	if code != 0 || !strings.Contains(out, "R 4 8.288891 1 0xfebc0008 0x80080783 0xffffffffc001041c 0\te1000_reset_hw+0x1c [e1000]\n") ||
		!strings.Contains(out, "R 4 8.294408 1 0xfebc0010 0x0 0x0 0\n") {
		t.Errorf("read --symbols text:\n%s", out)
	}

	// stats: hot code by function, the accesses without PC reported.
	out, e, code = runMMIO(t, "mmio", "stats", "--no-names", "--symbols", bundle, log)
	if code != 0 {
		t.Fatalf("stats: exit %d: %s", code, e)
	}
	for _, w := range []string{
		"hot code (accesses by function):",
		"e1000_reset_hw [e1000]                          2 accesses (2 R, 0 W) from 2 PCs",
		"0000:00:03.0/0+0x8: 2 R, 0 W",
		"e1000_probe [e1000]                             1 accesses (0 R, 1 W) from 1 PCs",
		"pci_generic                                     1 accesses (0 R, 1 W) from 1 PCs",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("stats lacks %q:\n%s", w, out)
		}
	}
	if !strings.Contains(e, "1 accesses have no PC") || !strings.Contains(e, "mmiotrace.trace_pc=1") {
		t.Errorf("stats stderr: %s", e)
	}

	// A plain kallsyms file works too (no module ranges).
	ks := filepath.Join(dir, "kallsyms")
	os.WriteFile(ks, []byte(symKallsyms), 0o600)
	out, _, _ = runMMIO(t, "mmio", "read", "--json", "--symbols", ks, log)
	if !strings.Contains(out, `"func":"e1000_reset_hw+0x1c [e1000]"`) {
		t.Errorf("kallsyms file: %s", out)
	}

	// kptr_restrict: zeroed addresses warn and name nothing; exit 0.
	hidden := filepath.Join(dir, "h.tar.gz")
	writeSymBundle(t, hidden, "0000000000000000 T pci_generic\n0000000000000000 t e1000_probe\t[e1000]\n0000000000000000 t e1000_reset_hw\t[e1000]\n", symModules)
	out, e, code = runMMIO(t, "mmio", "read", "--json", "--symbols", hidden, log)
	if code != 0 || strings.Contains(out, `"func":"`) || !strings.Contains(e, "kptr_restrict") {
		t.Errorf("hidden kallsyms: exit %d, stderr %s\n%s", code, e, out)
	}
	// A bundle without kallsyms is an error saying so.
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tar.NewWriter(zw).Close()
	zw.Close()
	empty := filepath.Join(dir, "old.tar.gz")
	os.WriteFile(empty, b.Bytes(), 0o600)
	if _, e, code := runMMIO(t, "mmio", "stats", "--symbols", empty, log); code == 0 || !strings.Contains(e, "has no kallsyms.txt") {
		t.Errorf("bundle without kallsyms: exit %d: %s", code, e)
	}
}
