package outfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// failAfter takes n bytes, then fails.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) <= f.n {
		f.n -= len(p)
		return len(p), nil
	}
	n := f.n
	f.n = 0
	return n, errors.New("full")
}

// Counter counts what the writer took, not what it was given.
func TestCounter(t *testing.T) {
	var b bytes.Buffer
	c := &Counter{W: &b}
	c.Write([]byte("hello "))
	c.Write([]byte("world"))
	if c.N != int64(b.Len()) || c.N != 11 {
		t.Errorf("counted %d, buffer holds %d", c.N, b.Len())
	}
	c = &Counter{W: &failAfter{n: 4}}
	if _, err := c.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Write([]byte("defg")); n != 1 || err == nil || c.N != 4 {
		t.Errorf("a short write: %d, %v, counted %d, want 4", n, err, c.N)
	}
}

// Creator's files are private, never one of the inputs, complete only
// once committed.
func TestCreator(t *testing.T) {
	dir := t.TempDir()
	create := Creator(nil)
	in := filepath.Join(dir, "in")
	os.WriteFile(in, []byte("input"), 0o644)
	if _, _, err := create(in, []string{in}); err == nil {
		t.Error("created over an input")
	}
	out := filepath.Join(dir, "out")
	w, commit, err := create(out, []string{in})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("data"))
	if _, err := os.Stat(out); err == nil {
		t.Error("the file is there before its commit")
	}
	if err := commit(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 4 {
		t.Errorf("%v, %v", fi, err)
	}
	w, _, _ = create(filepath.Join(dir, "aborted"), nil)
	w.Write([]byte("x"))
	w.(*File).Abort()
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("left: %v", entries)
	}
}

// Move replaces a regular file, refuses what Create refuses (leaving it
// as it was) and never leaves src behind.
func TestMoveAndCheck(t *testing.T) {
	dir := t.TempDir()
	src := func() string {
		p := filepath.Join(dir, ".stage")
		os.WriteFile(p, []byte("new"), 0o600)
		return p
	}
	out := filepath.Join(dir, "out")
	os.WriteFile(out, []byte("old"), 0o600)
	if err := Check(out, Options{}); err != nil {
		t.Errorf("Check of a regular file: %v", err)
	}
	if err := Move(src(), out, Options{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "new" {
		t.Errorf("out holds %q", b)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(filepath.Join(dir, "target"), link)
	var in Inputs
	in.Add(out)
	for _, c := range []struct {
		path string
		opt  Options
	}{{link, Options{}}, {dir, Options{}}, {out, Options{Inputs: &in}}} {
		cerr := Check(c.path, c.opt)
		merr := Move(src(), c.path, c.opt)
		if cerr == nil || merr == nil || cerr.Error() != merr.Error() {
			t.Errorf("%s: Check %v, Move %v", c.path, cerr, merr)
		}
		_, cerr = Create(c.path, c.opt)
		if cerr == nil || cerr.Error() != merr.Error() {
			t.Errorf("%s: Create %v, Move %v", c.path, cerr, merr)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("left: %v", entries)
	}
}
