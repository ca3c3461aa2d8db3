package vmlab

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The archive is checked with GNU cpio, the reference reader of the newc
// format: it must list every entry with its type and mode and extract the
// files' content and the symlink's target.
func TestWriteCPIOWithGNUCpio(t *testing.T) {
	cpio, err := exec.LookPath("cpio")
	if err != nil {
		t.Skip("cpio not found (apt-get install cpio): the oracle of this test")
	}
	entries := []cpioEntry{
		{Name: "/bin/busybox", Mode: 0o755, Data: bytes.Repeat([]byte("x"), 1001)},
		{Name: "/bin/sh", Mode: fs.ModeSymlink, Data: []byte("busybox")},
		{Name: "/dev/console", Mode: fs.ModeDevice | fs.ModeCharDevice | 0o600, Major: 5, Minor: 1},
		{Name: "/etc/a/b/c", Mode: 0o644, Data: []byte("abc\n")},
		{Name: "/empty", Mode: 0o600},
		{Name: "/lab", Mode: fs.ModeDir | 0o700},
	}
	var buf bytes.Buffer
	if err := writeCPIO(&buf, entries); err != nil {
		t.Fatal(err)
	}
	if buf.Len()%4 != 0 {
		t.Errorf("archive length %d is not a multiple of 4", buf.Len())
	}

	list := exec.Command(cpio, "-t", "-v", "--quiet")
	list.Stdin = bytes.NewReader(buf.Bytes())
	out, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("cpio -t: %v\n%s", err, out)
	}
	want := map[string]string{ // name -> mode string as cpio -tv prints it
		"bin":         "drwxr-xr-x",
		"bin/busybox": "-rwxr-xr-x",
		"bin/sh":      "lrwxrwxrwx",
		"dev":         "drwxr-xr-x",
		"dev/console": "crw-------",
		"etc":         "drwxr-xr-x",
		"etc/a":       "drwxr-xr-x",
		"etc/a/b":     "drwxr-xr-x",
		"etc/a/b/c":   "-rw-r--r--",
		"empty":       "-rw-------",
		"lab":         "drwx------",
	}
	got := map[string]string{}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name := f[len(f)-1]
		if f[0][0] == 'l' {
			name = f[len(f)-3] // "name -> target"
		}
		got[name] = f[0]
		order = append(order, name)
	}
	for name, mode := range want {
		if got[name] != mode {
			t.Errorf("cpio lists %s as %q, want %q\n%s", name, got[name], mode, out)
		}
	}
	if len(got) != len(want) {
		t.Errorf("cpio lists %d entries, want %d:\n%s", len(got), len(want), out)
	}
	seen := map[string]bool{}
	for _, name := range order {
		if d := filepath.Dir(name); d != "." && !seen[d] {
			t.Errorf("%s comes before its directory %s", name, d)
		}
		seen[name] = true
	}

	dir := t.TempDir()
	files := []string{"bin/busybox", "etc/a/b/c", "empty", "bin/sh"}
	extract := exec.Command(cpio, append([]string{"-i", "-d", "--quiet", "--no-absolute-filenames"}, files...)...)
	extract.Dir = dir
	extract.Stdin = bytes.NewReader(buf.Bytes())
	if out, err := extract.CombinedOutput(); err != nil {
		t.Fatalf("cpio -i: %v\n%s", err, out)
	}
	for _, e := range entries {
		if !e.Mode.IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name))
		if err != nil || !bytes.Equal(b, e.Data) {
			t.Errorf("extracted %s = %d bytes (%v), want %d bytes", e.Name, len(b), err, len(e.Data))
		}
	}
	if target, err := os.Readlink(filepath.Join(dir, "bin/sh")); err != nil || target != "busybox" {
		t.Errorf("extracted symlink bin/sh -> %q (%v), want busybox", target, err)
	}
}

func TestWriteCPIORejects(t *testing.T) {
	for name, entries := range map[string][]cpioEntry{
		"duplicate":        {{Name: "/a", Mode: 0o644}, {Name: "a", Mode: 0o644}},
		"file as a dir":    {{Name: "/a", Mode: 0o644}, {Name: "/a/b", Mode: 0o644}},
		"unsupported fifo": {{Name: "/p", Mode: fs.ModeNamedPipe | 0o644}},
	} {
		if err := writeCPIO(new(bytes.Buffer), entries); err == nil {
			t.Errorf("%s: writeCPIO accepted %v", name, entries)
		}
	}
}
