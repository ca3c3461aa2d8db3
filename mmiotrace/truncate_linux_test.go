package mmiotrace

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/iotap/iotap/internal/mapfile"
	"github.com/iotap/iotap/internal/mapfile/mapfiletest"
)

// bigLog writes the e1000 probe log repeated to at least size bytes (a
// plain log is mapped from 1 MiB on) and returns its path and bytes.
func bigLog(t *testing.T, size int) (string, []byte) {
	t.Helper()
	one, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	b := bytes.Repeat(one, size/len(one)+1)
	p := filepath.Join(t.TempDir(), "growing.log")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p, b
}

// wantFault checks that err is the fault of a read of path past size
// (the page after it, where the mapping ends now, or later).
func wantFault(t *testing.T, err error, path string, size int64) {
	t.Helper()
	var fe *mapfile.FaultError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v, want a *mapfile.FaultError", err)
	}
	page := int64(os.Getpagesize())
	if fe.File != path || fe.Offset < (size+page-1)/page*page {
		t.Fatalf("%v: want a read of %s at or past offset %d", err, path, (size+page-1)/page*page)
	}
}

// TestConvertLogTruncatedWhileMapped: 'mmio read' of a plain log cut
// shorter while it is mapped (a log still being written, copied or
// rotated) ends with an error naming the file and the offset, not with
// SIGBUS; what it wrote before is the start of the whole log's output.
func TestConvertLogTruncatedWhileMapped(t *testing.T) {
	path, whole := bigLog(t, 6<<20)
	for _, c := range []struct {
		name    string
		workers int
		json    bool
	}{{"text/1", 1, false}, {"text/2", 2, false}, {"json/1", 1, true}, {"json/2", 2, true}} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(path, whole, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			const cut = 1<<20 + 100
			w := &mapfiletest.CutOnWrite{T: t, Path: path, Size: cut}
			if c.json {
				w.Skip = 1 // the "input" record, written before the log is mapped
			}
			_, err = ReadLog(context.Background(), f, w, ReadOptions{JSON: c.json, Workers: c.workers, Path: path})
			wantFault(t, err, path, cut)
			var want bytes.Buffer
			if _, err := ReadLog(context.Background(), bytes.NewReader(whole), &want, ReadOptions{JSON: c.json}); err != nil {
				t.Fatal(err)
			}
			if w.Buf.Len() == 0 || !bytes.HasPrefix(want.Bytes(), w.Buf.Bytes()) {
				t.Errorf("wrote %d bytes, not a start of the log's %d", w.Buf.Len(), want.Len())
			}
		})
	}
}

// TestReaderTruncatedWhileMapped: Open's Reader (a mapped plain log) of
// a log cut shorter after its first records, read inside Reader.Do,
// returns the fault as an error, and again on the next call.
func TestReaderTruncatedWhileMapped(t *testing.T) {
	path, _ := bigLog(t, 3<<20)
	rd, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if !rd.mapped {
		t.Fatal("not mapped")
	}
	var rec Record
	for range 1000 {
		if err := rd.ReadInto(&rec); err != nil {
			t.Fatal(err)
		}
	}
	const cut = 200 << 10
	if err := os.Truncate(path, cut); err != nil {
		t.Fatal(err)
	}
	readAll := func() error {
		for {
			if err := rd.ReadInto(&rec); err != nil {
				return err
			}
		}
	}
	wantFault(t, rd.Do(readAll), path, cut)
	wantFault(t, rd.Do(readAll), path, cut)
	// CountKinds guards its loop.
	_, err = CountKinds(rd)
	wantFault(t, err, path, cut)
}

// TestFilterLogTruncatedWhileMapped: mmio filter's mapped path (a plain
// regular file, a stateless filter, several workers) ends with the
// fault as an error.
func TestFilterLogTruncatedWhileMapped(t *testing.T) {
	path, _ := bigLog(t, 6<<20)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const cut = 2 << 20
	w := &mapfiletest.CutOnWrite{T: t, Path: path, Size: cut}
	flt := &Filter{Kinds: 1<<KindRead | 1<<KindWrite}
	_, err = FilterLog(context.Background(), f, w, flt, FilterOptions{Workers: 2, ChunkSize: 256 << 10})
	wantFault(t, err, path, cut)
	if w.Buf.Len() == 0 {
		t.Error("nothing written before the cut")
	}
}
