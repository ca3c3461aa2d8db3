package intelpt

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadModuleSections: /proc/modules and /sys/module laid out as the
// kernel shows them to root: the code sections of each module (not
// .init.text, freed after loading; not data), each running to the next
// section's address within the module's size; addresses hidden from
// non-root (0) are an error that says so.
func TestReadModuleSections(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("modules", "mb 8192 0 - Live 0xffffffffc0010000\nma 16384 1 mb, Live 0xffffffffc0001000 (O)\n")
	for name, addr := range map[string]string{
		"ma/sections/.text": "0xffffffffc0001000", "ma/sections/.exit.text": "0xffffffffc0001400",
		"ma/sections/.init.text": "0xffffffffc0009000", "ma/sections/.data": "0xffffffffc0003000",
		"ma/sections/.altinstr_replacement": "0xffffffffc0001480",
		"mb/sections/.text":                 "0xffffffffc0010000", "mb/sections/.rodata": "0xffffffffc0011000",
	} {
		write("sys/"+name, addr+"\n")
	}
	got, err := ReadModuleSections(filepath.Join(dir, "modules"), filepath.Join(dir, "sys"), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []ModuleSection{
		{"ma", ".text", 0xffffffffc0001000, 0x400},
		{"ma", ".exit.text", 0xffffffffc0001400, 0x80},
		{"ma", ".altinstr_replacement", 0xffffffffc0001480, 0x3000 - 0x1480},
		{"mb", ".text", 0xffffffffc0010000, 0x1000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	write("sys/ma/sections/.text", "0x0000000000000000\n")
	if _, err := ReadModuleSections(filepath.Join(dir, "modules"), filepath.Join(dir, "sys"), ""); err == nil || !strings.Contains(err.Error(), "hidden") {
		t.Errorf("hidden address: %v", err)
	}
}
