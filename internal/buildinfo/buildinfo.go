// Package buildinfo says which build of iotap is running, from what the Go
// toolchain recorded in the binary.
package buildinfo

import "runtime/debug"

// Version is the version v (set at link time; "dev" when it was not) and
// the commit the binary was built from, as the Go toolchain recorded them
// in bi (ok: debug.ReadBuildInfo's; go build in a git checkout records the
// revision, its time and whether the tree had uncommitted changes):
// "dev (commit 1a2b3c4d5e6f, 2026-11-25T13:00:00Z, modified)". A module
// version replaces "dev".
func Version(v string, bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return v
	}
	if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	var rev, when string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return v + " (commit unknown: built without VCS information, e.g. by go run)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v += " (commit " + rev
	if when != "" {
		v += ", " + when
	}
	if modified {
		v += ", modified"
	}
	return v + ")"
}
