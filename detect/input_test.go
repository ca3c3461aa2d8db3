package detect

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// OpenTrace replays the head it read: the Input reads exactly the file's
// bytes (os.ReadFile is the oracle), and says what the file is.
func TestOpenTraceFiles(t *testing.T) {
	for _, c := range []struct {
		path   string
		want   Kind
		format string
	}{
		{"usbmon/lab-capture.pcapng", USB, "usbmon pcapng"},
		{"usbmon/lab-0u.txt", USB, "usbmon 1u"},
		{"mmiotrace/e1000-probe.log", MMIO, "mmiotrace log"},
		{"capture/mmio.log.zst", MMIO, "mmiotrace log (zstd-compressed)"},
	} {
		path := filepath.Join("..", "testdata", c.path)
		in, err := OpenTrace(path, c.want)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		got, err := io.ReadAll(in)
		if err != nil {
			t.Fatal(err)
		}
		if want := read(t, c.path); !bytes.Equal(got, want) {
			t.Errorf("%s: read %d bytes, the file has %d", c.path, len(got), len(want))
		}
		fi, _ := os.Stat(path)
		if in.Format() != c.format || in.Result.Kind != c.want || !in.Regular() || in.Size() != fi.Size() {
			t.Errorf("%s: format %q kind %q regular %v size %d, want %q %q true %d", c.path, in.Format(), in.Result.Kind, in.Regular(), in.Size(), c.format, c.want, fi.Size())
		}
		if err := in.Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestOpenTraceErrors(t *testing.T) {
	// Another kind: the error names what the file is and how to read it.
	_, err := OpenTrace("../testdata/usbmon/lab-capture.pcapng", MMIO)
	if !errors.Is(err, ErrNotTrace) || !strings.Contains(err.Error(), "lab-capture.pcapng: not an mmiotrace log: it is usbmon pcapng (use 'iotap usb ...')") {
		t.Errorf("pcapng as MMIO: %v", err)
	}
	dir := t.TempDir()
	if _, err := OpenTrace(dir, USB); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
	if _, err := OpenTrace(filepath.Join(dir, "nope"), USB); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	if _, err := OpenTrace(empty, MMIO); !errors.Is(err, ErrNotTrace) || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty file: %v", err)
	}
}

// withStdin runs fn with os.Stdin reading data from a pipe.
func withStdin(t *testing.T, data []byte, fn func()) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.Write(data); w.Close() }()
	old := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = old; r.Close() }()
	fn()
}

// A pipe of USB data is passed on unchecked (a live capture is not held
// up); a pipe of an mmiotrace log is checked like a file.
func TestOpenTracePipes(t *testing.T) {
	pcapng := read(t, "usbmon/lab-capture.pcapng")
	withStdin(t, pcapng, func() {
		in, err := OpenTrace("-", USB)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(in)
		if !bytes.Equal(got, pcapng) || in.Result != (Result{}) || in.Regular() || in.Size() != -1 {
			t.Errorf("USB pipe: %d bytes of %d, result %+v, regular %v, size %d", len(got), len(pcapng), in.Result, in.Regular(), in.Size())
		}
		if err := in.Close(); err != nil || in.File != os.Stdin {
			t.Errorf("close of stdin: %v", err)
		}
	})
	log := read(t, "mmiotrace/e1000-probe.log")
	withStdin(t, log, func() {
		in, err := OpenTrace("-", MMIO)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(in)
		if !bytes.Equal(got, log) || in.Format() != "mmiotrace log" {
			t.Errorf("MMIO pipe: %d bytes of %d, format %q", len(got), len(log), in.Format())
		}
	})
	withStdin(t, pcapng, func() {
		if _, err := OpenTrace("-", MMIO); !errors.Is(err, ErrNotTrace) || !strings.HasPrefix(err.Error(), "-: ") {
			t.Errorf("pcapng piped as MMIO: %v", err)
		}
	})
}
