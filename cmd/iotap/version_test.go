package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionString(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-25T13:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	if got, want := versionString(bi, true), "dev (commit 0123456789ab, 2026-11-25T13:00:00Z, modified)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	bi.Main.Version = "v0.3.0"
	bi.Settings = nil
	if got := versionString(bi, true); !strings.HasPrefix(got, "v0.3.0 (commit unknown") {
		t.Errorf("without VCS: %q", got)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--version"}, &out, &out); err != nil || !strings.HasPrefix(out.String(), "iotap ") {
		t.Errorf("--version: %q, %v", out.String(), err)
	}
}

// A binary built by go build in a git checkout names the commit it was
// built from, as git says it is.
func TestVersionNamesCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary: not with -short")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "iotap")
	cmd := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "commit unknown") {
		// go build does not stamp VCS information in a git worktree
		// (a clone, as CI uses, has it).
		t.Skipf("the toolchain recorded no VCS information here: %s", out)
	}
	if want := "(commit " + strings.TrimSpace(string(head))[:12]; !strings.Contains(string(out), want) {
		t.Errorf("--version says %q, git HEAD is %s", out, head)
	}
}
