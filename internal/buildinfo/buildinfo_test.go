package buildinfo

import (
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-25T13:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	for _, c := range []struct {
		v, module string
		settings  []debug.BuildSetting
		ok        bool
		want      string
	}{
		{"dev", "(devel)", bi.Settings, true, "dev (commit 0123456789ab, 2026-11-25T13:00:00Z, modified)"},
		{"v1.2.0", "v0.3.0", bi.Settings[:1], true, "v1.2.0 (commit 0123456789ab)"},
		{"dev", "v0.3.0", nil, true, "v0.3.0 (commit unknown: built without VCS information, e.g. by go run)"},
		{"dev", "", nil, false, "dev"},
	} {
		b := &debug.BuildInfo{Main: debug.Module{Version: c.module}, Settings: c.settings}
		if got := Version(c.v, b, c.ok); got != c.want {
			t.Errorf("%+v: %q, want %q", c, got, c.want)
		}
	}
}

// The test binary's own build information names the commit git names,
// when the toolchain recorded one.
func TestVersionOfThisBinary(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	got := Version("dev", bi, ok)
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil || strings.Contains(got, "commit unknown") || !ok {
		t.Skipf("no VCS information to compare (%v): %s", err, got)
	}
	if !strings.Contains(got, "(commit "+string(head[:12])) {
		t.Errorf("%q does not name git HEAD %s", got, head)
	}
}
