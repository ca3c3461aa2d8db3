package outfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func write(t *testing.T, path, s string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), mode); err != nil {
		t.Fatal(err)
	}
}

// entries lists dir, so that a test sees a leftover temporary file.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestCreateAtomic(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.pcapng")
	write(t, out, "old contents", 0o644)

	f, err := Create(out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	// Before Commit the good old file is still in place.
	if b, _ := os.ReadFile(out); string(b) != "old contents" {
		t.Fatalf("before commit: %q", b)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := f.Abort(); err != nil { // no-op after Commit
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil || string(b) != "new" {
		t.Fatalf("after commit: %q, %v", b, err)
	}
	fi, _ := os.Stat(out)
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("directory holds %v, want only out.pcapng", got)
	}
}

func TestAbortKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "trace.pftrace")
	write(t, out, "good", 0o600)
	f, err := Create(out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half a tra"))
	f.Abort()
	if b, _ := os.ReadFile(out); string(b) != "good" {
		t.Fatalf("abort changed the old file: %q", b)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("abort left %v", got)
	}
	// A new file that is aborted does not appear at all.
	g, err := Create(filepath.Join(dir, "new"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g.Abort()
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("abort of a new file left %v", got)
	}
	if _, err := g.Write([]byte("x")); err == nil {
		t.Error("write after Abort succeeded")
	}
}

func TestSameFileRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic and hard links need privileges on windows")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "a.pcapng")
	write(t, in, "capture", 0o600)
	if err := os.Symlink("a.pcapng", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(in, filepath.Join(dir, "hard")); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "cap")
	os.Mkdir(sub, 0o700)
	write(t, filepath.Join(sub, "usb.pcapng"), "x", 0o600)

	for _, tc := range []struct {
		name, input, output string
	}{
		{"same path", in, in},
		{"other spelling", in, filepath.Join(dir, ".", "x", "..", "a.pcapng")},
		{"hard link", in, filepath.Join(dir, "hard")},
		{"input through symlink", filepath.Join(dir, "link"), in},
		{"file in input directory", sub, filepath.Join(sub, "usb.pcapng")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ins Inputs
			ins.Add("-", tc.input)
			f, err := Create(tc.output, Options{Inputs: &ins})
			if !errors.Is(err, ErrSameFile) {
				if f != nil {
					f.Abort()
				}
				t.Fatalf("Create(%s) with input %s: %v, want ErrSameFile", tc.output, tc.input, err)
			}
			if !strings.Contains(err.Error(), tc.output) {
				t.Errorf("error %q does not name the output", err)
			}
		})
	}
	if b, _ := os.ReadFile(in); string(b) != "capture" {
		t.Fatalf("input changed: %q", b)
	}
	// The output through a symbolic link is refused for being a link.
	var ins Inputs
	_, err := Create(filepath.Join(dir, "link"), Options{Inputs: &ins})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("write through link: %v", err)
	}
	// An open input registers too.
	fh, _ := os.Open(in)
	defer fh.Close()
	var open Inputs
	open.AddFile(fh)
	if _, err := Create(filepath.Join(dir, "hard"), Options{Inputs: &open}); !errors.Is(err, ErrSameFile) {
		t.Errorf("AddFile: %v", err)
	}
	// Another file is fine.
	g, err := Create(filepath.Join(dir, "b.pcapng"), Options{Inputs: &open})
	if err != nil {
		t.Fatal(err)
	}
	g.Abort()
}

func TestModes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "clocks.json")
	f, err := Create(p, Options{Mode: Exclusive})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("{}"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(p, Options{Mode: Exclusive}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Exclusive over an existing file: %v, want ErrExist", err)
	}

	// InPlace: the data is under the final name while it is written.
	q := filepath.Join(dir, "usb.1u")
	write(t, q, "previous capture", 0o644)
	g, err := Create(q, Options{Mode: InPlace})
	if err != nil {
		t.Fatal(err)
	}
	g.Write([]byte("live"))
	if b, _ := os.ReadFile(q); string(b) != "live" {
		t.Errorf("in place, before commit: %q", b)
	}
	if err := g.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(q); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("in place: mode %v", fi.Mode().Perm())
	}
	h, _ := Create(filepath.Join(dir, "gone"), Options{Mode: InPlace})
	h.Abort()
	if _, err := os.Stat(filepath.Join(dir, "gone")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("abort in place left the file: %v", err)
	}

	if _, err := Create(dir, Options{}); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory as output: %v", err)
	}
	if _, err := Create(filepath.Join(dir, "nosuchdir", "x"), Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
}

func TestStdout(t *testing.T) {
	var buf bytes.Buffer
	f, err := Create("-", Options{Stdout: &buf})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	if err := f.Commit(); err != nil || buf.String() != "x" {
		t.Fatalf("%q %v", buf.String(), err)
	}
}

func TestPermissionDenied(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no unix permissions")
	}
	if os.Geteuid() == 0 {
		t.Skip("root may write anywhere; the CLI's bad-input test runs this as an unprivileged user")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	_, err := Create(filepath.Join(dir, "x"), Options{})
	if !errors.Is(err, fs.ErrPermission) && (err == nil || !strings.Contains(err.Error(), "permission denied")) {
		t.Fatalf("%v", err)
	}
	if !strings.Contains(err.Error(), filepath.Join(dir, "x")) || strings.Contains(err.Error(), ".iotap-") {
		t.Errorf("error %q should name the output, not the temporary file", err)
	}
}
