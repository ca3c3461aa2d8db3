package mmiotrace_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/internal/vmlab"
)

// TestLabMarkerSocket runs iotap mmio capture --marker-socket on the lab
// kernel while the e1000 is bound, sends markers through the socket from
// two clients and checks that the kernel's log has them after the bind,
// that the socket was 0600 while it existed and is gone afterwards.
func TestLabMarkerSocket(t *testing.T) {
	if !vmlab.InVM() {
		vmlab.GoTest(t, vmlab.Machine{NIC: true}, ".", "^TestLabMarkerSocket$")
		return
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "marks.sock")
	logPath := filepath.Join(dir, "x.log")
	done, ready := filepath.Join(dir, "done"), filepath.Join(dir, "ready")
	var stderr bytes.Buffer
	cmd := exec.Command("/bin/iotap", "mmio", "capture", "--marker-socket", sock, "--mark", "lab: start",
		"--bind", vmlab.E1000PCI, "-o", logPath, "--",
		"sh", "-c", "touch "+ready+"; while [ ! -e "+done+" ]; do sleep 0.1; done")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// The socket appears once tracing runs, the command after the bind:
	// send the markers once the command runs.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("command not started after 60 s: %s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatalf("no marker socket while tracing: %v", err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("marker socket mode %v, want a 0600 socket", fi.Mode())
	}
	for i := 1; i <= 2; i++ {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "lab: from socket %d\n", i)
		c.Close()
	}
	// No pause: iotap drains the socket when the command ends, so lines
	// sent before that are in the log, before "iotap: command done".
	os.WriteFile(done, nil, 0o600)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("capture: %v\n%s", err, stderr.String())
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("marker socket left behind: %v", err)
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	if !strings.HasPrefix(log, "VERSION 20070824\n") {
		t.Fatalf("log starts %q", log[:min(len(log), 40)])
	}
	pos := func(s string) int {
		i := strings.Index(log, s)
		if i < 0 {
			t.Fatalf("%q not in the log (%d bytes); stderr:\n%s", s, len(log), stderr.String())
		}
		return i
	}
	// The socket exists from before the bind (markers may be sent during
	// the probe), but these are sent once the command runs, so after the
	// bind and the command's start, and before its end.
	start, bound, run := pos(" lab: start\n"), pos(" iotap: bound "+vmlab.E1000PCI), pos(" iotap: run sh\n")
	s1, s2, end := pos(" lab: from socket 1\n"), pos(" lab: from socket 2\n"), pos(" iotap: command done\n")
	if !(start < bound && bound < run && run < s1 && s1 < s2 && s2 < end) {
		t.Errorf("markers out of order: start %d, bound %d, run %d, socket 1 %d, socket 2 %d, command done %d (byte offsets)\n%s",
			start, bound, run, s1, s2, end, markerContext(log))
	}
	if !strings.Contains(log[:bound], "\nW 4 ") || !strings.Contains(log, "\nMARK ") {
		t.Errorf("no e1000 writes before the bind marker")
	}
}

// markerContext returns the log's MARK lines and the record lines next to
// them, with line numbers, to show how a failing log is ordered.
func markerContext(log string) string {
	lines := strings.Split(log, "\n")
	var b strings.Builder
	last := -1
	for i, l := range lines {
		if !strings.HasPrefix(l, "MARK ") {
			continue
		}
		for j := max(i-2, last+1); j <= min(i+2, len(lines)-1); j++ {
			fmt.Fprintf(&b, "%7d %s\n", j+1, lines[j])
			last = j
		}
	}
	return b.String()
}
