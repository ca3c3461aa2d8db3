package mmiotrace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadSymbolsWarn: a kallsyms whose addresses the kernel hid (all
// zero, kptr_restrict) gives an empty table and one warning saying why;
// a readable one no warning; a missing file an error.
func TestLoadSymbolsWarn(t *testing.T) {
	dir := t.TempDir()
	hidden := filepath.Join(dir, "hidden")
	os.WriteFile(hidden, []byte("0000000000000000 T _text\n0000000000000000 t e1000_probe\t[e1000]\n"), 0o600)
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("ffffffff81000000 T _text\nffffffffc0001000 t e1000_probe\t[e1000]\n"), 0o600)
	var warned []string
	warn := func(s string) { warned = append(warned, s) }
	tab, err := LoadSymbolsWarn(hidden, warn)
	if err != nil || tab == nil || tab.Len() != 0 {
		t.Fatalf("hidden: %v, %v", tab, err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "kptr_restrict") || !strings.HasSuffix(warned[0], ": PCs stay unnamed") {
		t.Errorf("hidden: warnings %q", warned)
	}
	warned = nil
	if tab, err := LoadSymbolsWarn(good, warn); err != nil || tab.Len() == 0 || len(warned) != 0 {
		t.Errorf("readable: %v, %v, warnings %q", tab, err, warned)
	}
	if _, err := LoadSymbolsWarn(filepath.Join(dir, "none"), warn); err == nil || len(warned) != 0 {
		t.Errorf("missing: %v, warnings %q", err, warned)
	}
}
