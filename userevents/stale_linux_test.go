package userevents

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iotap/iotap/tracefs"
)

func TestInstancePID(t *testing.T) {
	for _, c := range []struct {
		name string
		pid  int
		ok   bool
	}{
		{"iotap-123-1", 123, true},
		{"iotap-4194304-18", 4194304, true},
		{"iotap-123", 0, false},
		{"iotap--1", 0, false},
		{"iotap-0-1", 0, false},
		{"iotap-012-1", 0, false},
		{"iotap-12-x", 0, false},
		{"iotap-12-01", 0, false},
		{"iotap-12-1-2", 0, false},
		{"other-12-1", 0, false},
		{"iotap-+12-1", 0, false},
	} {
		pid, ok := instancePID(c.name)
		if pid != c.pid || ok != c.ok {
			t.Errorf("instancePID(%q) = %d, %v; want %d, %v", c.name, pid, ok, c.pid, c.ok)
		}
	}
}

// deadPID returns the PID of a process that has exited.
func deadPID(t *testing.T) int {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	return cmd.Process.Pid
}

// TestRemoveStaleInstances: on a fake tracefs tree, only the instances of
// dead iotap processes go.
func TestRemoveStaleInstances(t *testing.T) {
	root := t.TempDir()
	dead := "iotap-" + strconv.Itoa(deadPID(t)) + "-1"
	keep := []string{
		"iotap-" + strconv.Itoa(os.Getpid()) + "-7", // this process
		"iotap-1-1",        // init: alive
		"iotap-1-x",        // not ours
		"perf-" + dead[6:], // not ours
		"mine",             // not ours
	}
	for _, d := range append([]string{dead}, keep...) {
		if err := os.MkdirAll(filepath.Join(root, "instances", d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	got := removeStaleInstances(tracefs.New(root))
	if !slices.Equal(got, []string{dead}) {
		t.Fatalf("removed %q, want [%s]", got, dead)
	}
	for _, d := range keep {
		if _, err := os.Stat(filepath.Join(root, "instances", d)); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "instances", dead)); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", dead, err)
	}
	// No instances directory: nothing to do, no error.
	if got := removeStaleInstances(tracefs.New(t.TempDir())); got != nil {
		t.Errorf("removed %q from an empty tree", got)
	}
}

// TestLabStaleInstance: a recorder killed with SIGKILL leaves its instance;
// the next recorder removes it and says so (the command on stderr, the API
// through RemovedStale).
func TestLabStaleInstance(t *testing.T) {
	f := labFS(t)
	// The command.
	inst := killedRecorder(t, f)
	out, err := exec.Command("/bin/iotap", "events", "record", "iotap_lab_stale u32 a", "--duration", "100ms", "-o", "/tmp/stale2.txt").CombinedOutput()
	if err != nil {
		t.Fatalf("second recorder: %v\n%s", err, out)
	}
	if want := "removed tracefs instance " + filepath.Base(inst) + ", left by a recorder that was killed"; !strings.Contains(string(out), want) {
		t.Fatalf("second recorder did not say %q:\n%s", want, out)
	}
	if _, err := os.Stat(inst); !os.IsNotExist(err) {
		t.Fatalf("stale instance still there after the command: %v", err)
	}
	// The API.
	inst = killedRecorder(t, f)
	r, err := NewRecorder(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.RemovedStale(); !slices.Equal(got, []string{filepath.Base(inst)}) {
		t.Fatalf("RemovedStale = %q, want [%s]", got, filepath.Base(inst))
	}
	if _, err := os.Stat(inst); !os.IsNotExist(err) {
		t.Fatalf("stale instance still there: %v", err)
	}
	t.Logf("removed %q", r.RemovedStale())
}

// killedRecorder starts "iotap events record", kills it with SIGKILL once
// its instance exists, and returns the instance's path (still there).
func killedRecorder(t *testing.T, f *tracefs.FS) string {
	t.Helper()
	cmd := exec.Command("/bin/iotap", "events", "record", "iotap_lab_stale u32 a", "-o", "/tmp/stale.txt")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inst := filepath.Join(mustPath(t, f, "instances"), "iotap-"+strconv.Itoa(cmd.Process.Pid)+"-1")
	for i := 0; ; i++ {
		if _, err := os.Stat(inst); err == nil {
			break
		}
		if i == 500 {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the recorder made no instance %s", inst)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(inst); err != nil {
		t.Fatalf("instance gone without cleanup: %v", err)
	}
	return inst
}

func mustPath(t *testing.T, f *tracefs.FS, rel ...string) string {
	p, err := f.Path(rel...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
