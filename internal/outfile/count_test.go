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
