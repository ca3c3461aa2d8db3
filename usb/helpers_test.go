package usb

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

// sharedUSB is the third-party capture folder (see its README for
// licences); tests read from it and skip when it is absent.
const sharedUSB = "../../shared/testdata/usb"

func sharedCapture(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(sharedUSB, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s absent: %v", p, err)
	}
	return p
}

// readAll reads every event of a capture file (cloned).
func readAll(t testing.TB, path string) []*usbmon.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, _, err := usbmon.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var evs []*usbmon.Event
	for {
		ev, err := r.Read()
		if errors.Is(err, io.EOF) {
			return evs
		}
		if err != nil {
			t.Fatalf("%s: event %d: %v", path, len(evs), err)
		}
		evs = append(evs, ev)
	}
}

func needTshark(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed")
	}
	return p
}
