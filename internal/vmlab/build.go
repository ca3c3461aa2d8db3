package vmlab

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// ModuleRoot returns the directory holding the go.mod of the current
// module, found by walking up from the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("vmlab: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("vmlab: no go.mod in %s or above", dir)
		}
	}
}

func moduleRoot(t testing.TB) string {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func goTool(t testing.TB) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("vmlab: the go command is not in PATH (needed to build the guest's binaries)")
	}
	return gobin
}

// staticGoEnv is the environment of a static Linux/amd64 Go build.
func staticGoEnv() []string {
	return append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
}

// BuildGo builds the Go command pkg (a package path such as "./cmd/iotap",
// relative to the module root, or an import path) as a static binary
// (CGO_ENABLED=0) and returns its host path, for Machine.Binaries.
func BuildGo(t testing.TB, pkg string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(pkg))
	if err := buildGo(goTool(t), moduleRoot(t), pkg, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func buildGo(gobin, root, pkg, out string) error {
	return runGo(gobin, root, "build", "-o", out, pkg)
}

// runGo runs "go args..." in root for a static Linux/amd64 build.
func runGo(gobin, root string, args ...string) error {
	cmd := exec.Command(gobin, args...)
	cmd.Dir = root
	cmd.Env = staticGoEnv()
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("vmlab: go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// BuildC compiles the C file src (relative to the working directory, i.e.
// the test's package directory, or absolute) with "gcc -static -O2" and
// returns the host path of the binary, for Machine.Binaries. It skips the
// test when gcc or the static C library is missing.
func BuildC(t testing.TB, src string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("vmlab: gcc not found: apt-get install gcc libc6-dev")
	}
	name := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
	out := filepath.Join(t.TempDir(), name)
	cmd := exec.Command(gcc, "-static", "-O2", "-Wall", "-o", out, src)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if strings.Contains(stderr.String(), "cannot find -lc") {
			t.Skip("vmlab: no static C library: apt-get install libc6-dev")
		}
		t.Fatalf("vmlab: gcc %s: %v\n%s", src, err, stderr.Bytes())
	}
	return out
}

// iotapBuild is the static /bin/iotap, built once per test process.
var iotapBuild struct {
	once sync.Once
	path string
	err  error
}

// iotapBinary returns the host path of a static build of ./cmd/iotap. It
// is built once per test process into a directory named after the
// process; directories of processes that are gone are removed then.
func iotapBinary(t testing.TB) string {
	t.Helper()
	gobin, root := goTool(t), moduleRoot(t)
	iotapBuild.once.Do(func() {
		removeStaleBuildDirs()
		dir := filepath.Join(os.TempDir(), "iotap-vmlab-"+strconv.Itoa(os.Getpid()))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			iotapBuild.err = fmt.Errorf("vmlab: %w", err)
			return
		}
		out := filepath.Join(dir, "iotap")
		if err := buildGo(gobin, root, "./cmd/iotap", out); err != nil {
			iotapBuild.err = fmt.Errorf("vmlab: the guest's /bin/iotap does not build: %w", err)
		}
		iotapBuild.path = out
	})
	if iotapBuild.err != nil {
		t.Fatal(iotapBuild.err)
	}
	return iotapBuild.path
}

func removeStaleBuildDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "iotap-vmlab-*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "iotap-vmlab-"))
		if err != nil {
			continue
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); errors.Is(err, os.ErrNotExist) {
			os.RemoveAll(d)
		}
	}
}
