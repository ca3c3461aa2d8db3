package outfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Abort removes what was not committed (and no temporary file is left);
// a committed file stays with its bytes; Wrote says which.
func TestSet(t *testing.T) {
	dir := t.TempDir()
	var s Set
	a, err := s.Create(filepath.Join(dir, "a"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Create(filepath.Join(dir, "b"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Wrote(); got != ": nothing written" {
		t.Errorf("before a commit: %q", got)
	}
	a.Write([]byte("12345"))
	b.Write([]byte("partial"))
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	want := ": wrote " + filepath.Join(dir, "a") + " (5 bytes, complete up to the interruption), split.json"
	if got := s.Wrote("split.json"); got != want {
		t.Errorf("Wrote: %q, want %q", got, want)
	}
	s.Abort()
	if names := entries(t, dir); strings.Join(names, " ") != "a" {
		t.Errorf("after Abort the directory holds %v, want only a", names)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a")); string(data) != "12345" {
		t.Errorf("a holds %q", data)
	}
	// Standard output is never "written" as a file.
	var stdout Set
	var buf bytes.Buffer
	f, _ := stdout.Create("-", Options{Stdout: &buf})
	f.Write([]byte("x"))
	f.Commit()
	if got := stdout.Wrote(); got != "" || buf.String() != "x" {
		t.Errorf("stdout: %q, %q", got, buf.String())
	}
}

// Creator's writers commit their file on Close and remove it on Abort;
// the set still aborts what was neither.
func TestSetCreator(t *testing.T) {
	dir := t.TempDir()
	var s Set
	create := s.Creator(Options{Mode: InPlace})
	for _, n := range []string{"kept", "aborted", "left"} {
		w, err := create(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(n))
		switch n {
		case "kept":
			err = w.Close()
		case "aborted":
			err = w.(interface{ Abort() error }).Abort()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	s.Abort()
	if names := entries(t, dir); strings.Join(names, " ") != "kept" {
		t.Errorf("the directory holds %v, want only kept", names)
	}
	if st, err := os.Stat(filepath.Join(dir, "kept")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("kept: %v, %v", st, err)
	}
}
