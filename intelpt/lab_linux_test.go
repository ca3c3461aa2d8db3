//go:build linux

package intelpt

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/unix"
	"github.com/iotap/iotap/internal/vmlab"
)

// TestLabCapture runs on the lab kernel in QEMU. The guest CPU (TCG) has no
// Processor Trace, so capture must refuse cleanly; the perf ring and
// sideband code that capture uses is exercised for real with a software
// event.
func TestLabCapture(t *testing.T) {
	if !vmlab.InVM() {
		vmlab.GoTest(t, vmlab.Machine{}, ".", "^TestLabCapture$")
		return
	}
	// 1. The API refuses with ErrNotSupported naming the CPU.
	_, err := NewTrace(TraceConfig{Chunks: 4})
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "Intel PT needs an Intel CPU with the intel_pt PMU: this is") {
		t.Fatalf("NewTrace in the guest: %v", err)
	}
	t.Logf("guest: %v", err)

	// 2. The command refuses with exit status 1 and creates nothing.
	out, err := exec.Command("/bin/iotap", "pt", "capture", "-o", "/tmp/ptout", "--cpu", "0", "--duration", "10ms").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "Intel PT needs an Intel CPU") {
		t.Fatalf("iotap pt capture: %v\n%s", err, out)
	}
	if _, err := os.Stat("/tmp/ptout"); !os.IsNotExist(err) {
		t.Fatalf("output directory created: %v", err)
	}
	// ... and with a COMMAND, which is never started.
	out, err = exec.Command("/bin/iotap", "pt", "capture", "-o", "/tmp/ptcmd", "--", "/bin/sh", "-c", "echo > /tmp/ptcmd.ran").CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "Intel PT needs an Intel CPU") {
		t.Fatalf("iotap pt capture -- COMMAND: %v\n%s", err, out)
	}
	for _, p := range []string{"/tmp/ptcmd", "/tmp/ptcmd.ran"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after a refused capture (%v)", p, err)
		}
	}

	// 3. The sideband ring: a dummy software event on this process (and
	// the children it starts) records comm, fork and exit records, read
	// through the same Buffer code as PT capture.
	attr := &unix.PerfEventAttr{
		Type:        unix.PerfTypeSoftware,
		Size:        unix.PerfAttrSize,
		Config:      unix.PerfCountSWDummy,
		Sample_type: unix.PerfSampleTID | unix.PerfSampleTime,
		Bits:        unix.PerfBitDisabled | unix.PerfBitInherit | unix.PerfBitMmap2 | unix.PerfBitComm | unix.PerfBitTask | unix.PerfBitSampleIDAll,
	}
	// pid 0 is this OS thread, and inherit follows only the children it
	// forks: keep the goroutine (which forks /bin/true below) on it, or a
	// fork from another thread of the runtime goes unrecorded.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// Inherited per-task events cannot be mapped with cpu -1: use cpu 0
	// (the guest has one CPU).
	fd, err := unix.PerfEventOpen(attr, 0, 0)
	if err != nil {
		t.Fatalf("perf_event_open: %v", err)
	}
	b, err := mapBuffer(fd, 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer b.free()
	if err := unix.PerfEnable(fd.Int()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := exec.Command("/bin/true").Run(); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.PerfDisable(fd.Int()); err != nil {
		t.Fatal(err)
	}
	st, err := b.DrainSideband()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sideband: %+v (%d bytes)", st, len(b.Sideband()))
	if st.ByType["comm"] < 3 || st.ByType["fork"] < 3 || st.ByType["exit"] < 3 || st.BadRecords != 0 || st.Lossy() {
		t.Fatalf("sideband records: %+v", st)
	}
	// A second drain finds nothing new: the tail was released.
	before := st.Records
	if st, _ = b.DrainSideband(); st.Records != before {
		t.Fatalf("second drain read %d more records", st.Records-before)
	}
}
