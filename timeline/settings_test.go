package timeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/regdb"
)

// TestSettingsApply: each setting loads what it names (the database by
// file and by shipped name, the clocks file, hidden symbols as a warning,
// PT calls with their resolution); nothing set loads nothing; a bad name
// is regdb.ErrNotFound, a missing clocks file an error.
func TestSettingsApply(t *testing.T) {
	var opt Options
	if err := (&Settings{BandwidthWindow: time.Second}).Apply(&opt); err != nil || opt.DB != nil || opt.Clocks != nil || opt.Symbols != nil || opt.PTCalls != nil || opt.BandwidthWindowNS != 1e9 {
		t.Fatalf("empty settings: %+v, %v", opt, err)
	}
	hidden := filepath.Join(t.TempDir(), "kallsyms")
	os.WriteFile(hidden, []byte("0000000000000000 T _text\n"), 0o600)
	var warned []string
	opt = Options{Warn: func(s string) { warned = append(warned, s) }}
	s := Settings{DB: "e1000", Clocks: "../testdata/capture/clocks.json", Symbols: hidden, PTCalls: true, PTResolution: time.Microsecond}
	if err := s.Apply(&opt); err != nil {
		t.Fatal(err)
	}
	want, _ := regdb.Builtin("e1000")
	clocks, _ := LoadClocks("../testdata/capture/clocks.json")
	if opt.DB == nil || len(opt.DB.Domains) != len(want.Domains) || opt.Clocks == nil || len(opt.Clocks.Sources) != len(clocks.Sources) {
		t.Errorf("db %v, clocks %v", opt.DB, opt.Clocks)
	}
	if opt.Symbols == nil || len(warned) != 1 || !strings.Contains(warned[0], "PCs stay unnamed") {
		t.Errorf("hidden symbols: %v, warnings %q", opt.Symbols, warned)
	}
	if opt.PTCalls == nil || opt.PTCalls.Resolution != 1000 || !opt.PTCalls.Demangle {
		t.Errorf("PT calls: %+v", opt.PTCalls)
	}
	if err := (&Settings{DB: "nosuch"}).Apply(&opt); !errors.Is(err, regdb.ErrNotFound) {
		t.Errorf("unknown database: %v", err)
	}
	if err := (&Settings{Clocks: "nosuch.json"}).Apply(&opt); err == nil {
		t.Errorf("missing clocks file: no error")
	}
}
