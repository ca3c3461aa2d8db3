package mmiotrace

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/rotate"
)

// TestCaptureArgs: mmio capture's flags become CaptureToFile's options
// (the PCI address parsed, a ring of files, the interval), and each
// mistake is an error naming its flag.
func TestCaptureArgs(t *testing.T) {
	a := CaptureArgs{Path: "x.log", Bind: "0000:00:03.0", Capture: CaptureOptions{BufferKB: 4096, BindDriver: "e1000"}}
	o, err := a.FileOptions(rotate.Args{FileSize: "64M", Ring: 4, Interval: time.Second})
	if err != nil || o.Path != "x.log" || o.Capture.Bind == nil || *o.Capture.Bind != (PCIAddr{Dev: 3}) ||
		o.Rotate == nil || o.Rotate.Size != 64<<20 || o.Rotate.Files != 4 || o.Capture.Interval != time.Second || o.Capture.BufferKB != 4096 {
		t.Errorf("FileOptions = %+v, %v", o, err)
	}
	for _, tc := range []struct {
		a    CaptureArgs
		rot  rotate.Args
		want string
	}{
		{CaptureArgs{}, rotate.Args{}, "capture needs -o FILE"},
		{CaptureArgs{Path: "-", Bundle: "b.tar.gz"}, rotate.Args{}, "--bundle needs the log in a file (-o FILE)"},
		{CaptureArgs{Path: "x", Capture: CaptureOptions{BufferKB: -1}}, rotate.Args{}, "--buffer-kb -1: must be positive"},
		{CaptureArgs{Path: "x", Bind: "nonsense"}, rotate.Args{}, `--bind: bad PCI address "nonsense"`},
		{CaptureArgs{Path: "x", Capture: CaptureOptions{BindDriver: "a/b"}}, rotate.Args{}, `--driver "a/b": not a driver name`},
		{CaptureArgs{Path: "x"}, rotate.Args{Ring: 2}, "--ring 2 needs --file-size or --file-duration"},
		{CaptureArgs{Path: "x", Bundle: "b.tar.gz"}, rotate.Args{FileSize: "1M"}, "--bundle needs the log in one file"},
	} {
		if _, err := tc.a.FileOptions(tc.rot); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v %+v: %v; want %q", tc.a, tc.rot, err, tc.want)
		}
	}
}

// TestCompressed: a log written through Compressed reads back from the
// compressed file with gzip -d and zstd -d; a plain name stays plain; the
// file is closed only after the compressed stream ends.
func TestCompressed(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("R 4 1.000001 1 0xfebc0008 0x1 0x0 0\n", 100)
	closed := map[string]bool{}
	create := Compressed(func(path string) (io.WriteCloser, error) {
		f, err := os.Create(path)
		return closer{f, func() { closed[path] = true }}, err
	})
	for _, tc := range []struct{ name, tool string }{{"x.log", "cat"}, {"x.log.gz", "gzip"}, {"x.log.zst", "zstd"}} {
		p := filepath.Join(dir, tc.name)
		w, err := create(p)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, text)
		if closed[p] {
			t.Errorf("%s closed before the writer", tc.name)
		}
		if err := w.Close(); err != nil || !closed[p] {
			t.Fatalf("%s: Close: %v, file closed %v", tc.name, err, closed[p])
		}
		args := []string{"-dc", p}
		if tc.tool == "cat" {
			args = []string{p}
		}
		if _, err := exec.LookPath(tc.tool); err != nil {
			t.Logf("%s: %s not installed", tc.name, tc.tool)
			continue
		}
		out, err := exec.Command(tc.tool, args...).Output()
		if err != nil || !bytes.Equal(out, []byte(text)) {
			t.Errorf("%s: %s gives %d bytes (%v), want the %d written", tc.name, tc.tool, len(out), err, len(text))
		}
	}
}

type closer struct {
	*os.File
	done func()
}

func (c closer) Close() error { c.done(); return c.File.Close() }
