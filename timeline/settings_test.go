package timeline

import (
	"errors"
	"fmt"
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

// TestSettingsExpandInputs: a directory's clocks.json becomes the
// settings' clocks file and is returned to be said, also when a later
// argument fails; a clocks file already given is kept and nothing is
// returned.
func TestSettingsExpandInputs(t *testing.T) {
	const dir = "../testdata/capture"
	var s Settings
	in, clocks, err := s.ExpandInputs([]string{dir})
	want := filepath.Join(dir, "clocks.json")
	if err != nil || len(in) != 3 || clocks != want || s.Clocks != want {
		t.Errorf("directory: %q, %q, %v; Clocks %q", in, clocks, err, s.Clocks)
	}
	s = Settings{}
	if _, clocks, err := s.ExpandInputs([]string{dir, "nosuchfile"}); err == nil || clocks != want || s.Clocks != want {
		t.Errorf("a later argument missing: %q, %v; Clocks %q", clocks, err, s.Clocks)
	}
	s = Settings{Clocks: "mine.json"}
	if _, clocks, err := s.ExpandInputs([]string{dir}); err != nil || clocks != "" || s.Clocks != "mine.json" {
		t.Errorf("--clocks given: %q, %v; Clocks %q", clocks, err, s.Clocks)
	}
	s = Settings{}
	if _, clocks, err := s.ExpandInputs([]string{"../testdata/mmiotrace/e1000-probe.log"}); err != nil || clocks != "" || s.Clocks != "" {
		t.Errorf("a file: %q, %v; Clocks %q", clocks, err, s.Clocks)
	}
}

// TestSettingsCheck: the bandwidth window must be positive, the PT
// resolution not negative (a negative one, made unsigned, kept no call).
func TestSettingsCheck(t *testing.T) {
	for _, c := range []struct {
		r    time.Duration
		want string
	}{{0, ""}, {time.Microsecond, ""}, {-time.Second, "--pt-resolution -1s: want 0 (all calls) or more"}} {
		err := (&Settings{BandwidthWindow: time.Second, PTResolution: c.r}).Check()
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("PTResolution %v: %v, want %q", c.r, err, c.want)
		}
	}
	for _, c := range []struct {
		w  time.Duration
		ok bool
	}{{time.Millisecond, true}, {0, false}, {-time.Second, false}} {
		err := (&Settings{BandwidthWindow: c.w}).Check()
		if (err == nil) != c.ok || (err != nil && err.Error() != "--bandwidth-window must be positive") {
			t.Errorf("%v: %v", c.w, err)
		}
	}
}
