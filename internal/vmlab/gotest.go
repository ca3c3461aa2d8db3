package vmlab

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// GoTest runs tests of a Go package inside a lab guest. pkg is a package
// path relative to the module root ("./userevents") or an import path;
// "." or "" means the package of the calling test (the working
// directory). Its test binary is built static (CGO_ENABLED=0 go test -c),
// put in the guest as /bin/<name>.test and run there with IOTAP_IN_VM=1,
// "-test.v -test.run runRegexp", in /lab/pkg, which holds a copy of the
// package's testdata directory (up to MaxTestdata bytes; pass bigger
// inputs some other way) so that relative testdata paths work as on the
// host. m.Script, if set, runs first (in the same shell, so it can
// set up the guest).
//
// The guest test binary gets -test.timeout a minute short of the run's
// timeout (at least 30 s), so that a hung test ends with Go's goroutine
// dump in the output. GoTest fails t with the guest's output when the
// guest tests fail or none matched runRegexp, and skips t when every guest test skipped. The
// guest output is logged and left in Result.Out as gotest.log.
func GoTest(t testing.TB, m Machine, pkg, runRegexp string) *Result {
	t.Helper()
	requirements(t, m)
	gobin, root := goTool(t), moduleRoot(t)
	if pkg == "" || pkg == "." {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, wd)
		if err != nil {
			t.Fatal(err)
		}
		pkg = "./" + filepath.ToSlash(rel)
	}
	name := filepath.Base(strings.TrimSuffix(pkg, "/..."))
	if name == "." || name == "/" {
		name = "pkg"
	}
	bin := filepath.Join(t.TempDir(), name+".test")
	if err := buildGoTest(gobin, root, pkg, bin); err != nil {
		t.Fatal(err)
	}
	if err := checkTestsMatch(bin, runRegexp); err != nil {
		t.Fatalf("vmlab: %s: %v", pkg, err)
	}
	m.Binaries = copyMap(m.Binaries)
	m.Binaries["/bin/"+name+".test"] = bin
	m.Files = copyMap(m.Files)
	if err := addTestdata(gobin, root, pkg, m.Files); err != nil {
		t.Fatal(err)
	}
	// The guest test gets a -test.timeout a minute short of the run's, so
	// that a hung test ends with its goroutines' stacks in the output
	// rather than with QEMU killed.
	accel, _ := chooseAccel()
	guestTimeout := runTimeout(t, m, accel) - time.Minute
	if guestTimeout < 30*time.Second {
		guestTimeout = 30 * time.Second
	}
	m.Script = m.Script + "\n" + goTestScript(name, runRegexp, guestTimeout)
	res := Run(t, m)
	log := string(res.ReadOut(t, "gotest.log"))
	t.Logf("vmlab: guest test output:\n%s", log)
	switch {
	case res.ExitCode != 0:
		t.Fatalf("vmlab: guest tests of %s failed (exit %d):\n%s", pkg, res.ExitCode, log)
	case strings.Contains(log, "testing: warning: no tests to run"):
		t.Fatalf("vmlab: no test of %s matches %q in the guest", pkg, runRegexp)
	case !passRE.MatchString(log) && skipRE.MatchString(log):
		t.Skipf("vmlab: every guest test of %s skipped:\n%s", pkg, log)
	}
	return res
}

var (
	passRE = regexp.MustCompile(`(?m)^--- PASS: `)
	skipRE = regexp.MustCompile(`(?m)^--- SKIP: `)
)

// goTestScript is the guest shell code that runs /bin/<name>.test, keeps
// its output in /out/gotest.log and exits with its status.
func goTestScript(name, runRegexp string, timeout time.Duration) string {
	return "mkdir -p /lab/pkg && cd /lab/pkg\n" +
		"set +e\n" +
		"IOTAP_IN_VM=1 /bin/" + name + ".test -test.v -test.timeout " + timeout.Round(time.Second).String() +
		" -test.run " + shellQuote(runRegexp) + " >/out/gotest.log 2>&1\n" +
		"rc=$?\n" +
		"cat /out/gotest.log\n" +
		"exit $rc\n"
}

// MaxTestdata is the most of a package's testdata directory GoTest copies
// into the guest.
const MaxTestdata = 32 << 20

// addTestdata adds the files of pkg's testdata directory to files, under
// /lab/pkg/testdata.
func addTestdata(gobin, root, pkg string, files map[string][]byte) error {
	cmd := exec.Command(gobin, "list", "-f", "{{.Dir}}", pkg)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("vmlab: go list %s: %w", pkg, err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "testdata")
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	total := 0
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		total += len(b)
		if total > MaxTestdata {
			return fmt.Errorf("vmlab: %s holds more than %d MiB; GoTest copies at most that into the guest", dir, MaxTestdata>>20)
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		guest := "/lab/pkg/testdata/" + filepath.ToSlash(rel)
		if _, ok := files[guest]; !ok {
			files[guest] = b
		}
		return nil
	})
}

// checkTestsMatch fails unless a test of the test binary bin matches the
// top level of runRegexp (asked with -test.list on the host, before a
// guest boots for nothing).
func checkTestsMatch(bin, runRegexp string) error {
	top := strings.SplitN(runRegexp, "/", 2)[0]
	out, err := exec.Command(bin, "-test.list", top).Output()
	if err != nil {
		return fmt.Errorf("%s -test.list: %w", bin, err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Test") {
			return nil
		}
	}
	return fmt.Errorf("no test matches %q", runRegexp)
}

func buildGoTest(gobin, root, pkg, out string) error {
	return runGo(gobin, root, "test", "-c", "-o", out, pkg)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func copyMap[V any](m map[string]V) map[string]V {
	c := make(map[string]V, len(m)+1)
	for k, v := range m {
		c[k] = v
	}
	return c
}
