package export

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestNewOptionErrors: partition keys not known, given twice, or "host"
// without the host are *OptionError; a good partition is none, and
// neither is a missing directory (not the user's option: the CLI checks
// --parquet itself).
func TestNewOptionErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	for _, c := range []struct {
		opt    Options
		option bool
	}{
		{Options{Dir: dir, Partition: []string{"week"}}, true},
		{Options{Dir: dir, Partition: []string{"date", "date"}}, true},
		{Options{Dir: dir, Partition: []string{"host"}}, true},
		{Options{Dir: dir, Partition: []string{"date", "host"}, Identity: Identity{Host: "lab1"}}, false},
		{Options{Partition: []string{"date"}}, false},
	} {
		x, err := New(c.opt)
		var oe *OptionError
		if errors.As(err, &oe) != c.option || (!c.option && c.opt.Dir != "" && err != nil) {
			t.Errorf("%+v: %v, option error %v", c.opt.Partition, err, c.option)
		}
		if x != nil {
			x.Close()
		}
	}
}
