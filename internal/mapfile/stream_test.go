package mapfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/iotap/iotap/internal/mapfile"
	"github.com/iotap/iotap/internal/mapfile/mapfiletest"
)

// TestReaderShrunk: a file read with read(2) and cut shorter under the
// reader (by a write of the copy it makes, mapfiletest.CutOnWrite) ends
// with a *FaultError naming the file and the offset where its data
// ended, the mapped reads' error, not a clean end of file; the bytes
// before the cut are the file's. A file read whole ends cleanly.
func TestReaderShrunk(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	p := filepath.Join(t.TempDir(), "input")
	const chunk = 64 << 10
	for _, cut := range []int64{300 << 10, 0} {
		// The first chunk was read before the cut, at the first Write.
		end := max(cut, chunk)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		r := mapfile.NewReader(f, "")
		w := &mapfiletest.CutOnWrite{T: t, Path: p, Size: cut}
		_, err = io.CopyBuffer(w, r, make([]byte, chunk))
		f.Close()
		var fe *mapfile.FaultError
		if !errors.As(err, &fe) || !errors.Is(err, mapfile.ErrTruncated) || fe.File != p || fe.Offset != end {
			t.Fatalf("cut to %d: %v, want a *FaultError at offset %d", cut, err, end)
		}
		if want := fmt.Sprintf("%s: truncated while reading at offset %d", p, end); err.Error() != want {
			t.Errorf("%q, want %q", err, want)
		}
		if w.Buf.Len() != int(end) || !bytes.Equal(w.Buf.Bytes(), data[:end]) {
			t.Errorf("cut to %d: read %d bytes, not the file's first %d", cut, w.Buf.Len(), end)
		}
	}
	// Unchanged: io.EOF, all of it.
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b, err := io.ReadAll(mapfile.NewReader(f, "name")); err != nil || !bytes.Equal(b, data) {
		t.Errorf("whole file: %d bytes, %v", len(b), err)
	}
}

// TestReaderAtShrunk: ReadAt of a file cut shorter after NewReaderAt is
// a *FaultError at the end of its data; within the file, or past the
// size at open, reads are the file's.
func TestReaderAtShrunk(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	p := filepath.Join(t.TempDir(), "input")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, size := mapfile.NewReaderAt(f, "IN")
	if size != int64(len(data)) {
		t.Fatalf("size %d", size)
	}
	buf := make([]byte, 1000)
	if n, err := r.ReadAt(buf, size-10); n != 10 || err != io.EOF {
		t.Errorf("read past the end of the whole file: %d, %v; want 10, EOF", n, err)
	}
	if err := os.Truncate(p, 5000); err != nil {
		t.Fatal(err)
	}
	if n, err := r.ReadAt(buf, 0); n != 1000 || err != nil || !bytes.Equal(buf, data[:1000]) {
		t.Errorf("read before the cut: %d, %v", n, err)
	}
	n, err := r.ReadAt(buf, 4500)
	var fe *mapfile.FaultError
	if n != 500 || !errors.As(err, &fe) || fe.Offset != 5000 || err.Error() != "IN: truncated while reading at offset 5000" {
		t.Errorf("read across the cut: %d, %v", n, err)
	}
}

// TestReaderNotRegular: a pipe is read as it is (its size says nothing).
func TestReaderNotRegular(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	if r := mapfile.NewReader(pr, ""); r != io.Reader(pr) {
		t.Errorf("a pipe wrapped: %T", r)
	}
	pw.Close()
}
