package mmiotrace

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeLongLineLog writes testdata/e1000-bind.log with a MARK line of
// 1.1 MiB (over DefaultMaxLine) inserted as line 21, and returns its path.
func writeLongLineLog(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("testdata/e1000-bind.log")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	var b bytes.Buffer
	b.Write(bytes.Join(lines[:20], nil))
	b.WriteString("MARK 8.296100 " + strings.Repeat("x", 1100<<10) + "\n")
	b.Write(bytes.Join(lines[20:], nil))
	path := filepath.Join(t.TempDir(), "long.log")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A line longer than DefaultMaxLine is refused by every way of reading a
// log, with its number, whatever keep-going says: a read Reader refused it
// while a mapped log (Open, FilterLog's mapped chunks) took it, so 'mmio
// read' failed and 'mmio read --check', '-Y', 'mmio filter' exited 0.
func TestLongLineRefusedEverywhere(t *testing.T) {
	path := writeLongLineLog(t)
	const want = "mmiotrace: line 21: bad mmiotrace line: line longer than 1048576 bytes"
	keepW := func(r *Record) bool { return r.Kind == KindWrite }
	readLog := func(opt ReadOptions) func(*os.File) error {
		return func(f *os.File) error {
			opt.KeepGoing = true
			_, err := ReadLog(context.Background(), f, &bytes.Buffer{}, opt)
			return err
		}
	}
	filterLog := func(f *Filter, workers int, stream bool) func(*os.File) error {
		return func(in *os.File) error {
			opt := FilterOptions{Workers: workers, KeepGoing: true}
			if stream { // not a file: not mapped
				data, err := os.ReadFile(in.Name())
				if err != nil {
					return err
				}
				_, err = FilterLog(context.Background(), bytes.NewReader(data), &bytes.Buffer{}, f, opt)
				return err
			}
			_, err := FilterLog(context.Background(), in, &bytes.Buffer{}, f, opt)
			return err
		}
	}
	for _, tc := range []struct {
		name string
		run  func(*os.File) error
	}{
		{"ReadLog convert read", readLog(ReadOptions{})},
		{"ReadLog convert mapped", readLog(ReadOptions{Path: path, Workers: 2})},
		{"ReadLog convert mapped 1 worker", readLog(ReadOptions{Path: path, Workers: 1})},
		{"ReadLog check read", readLog(ReadOptions{Check: true})},
		{"ReadLog check mapped", readLog(ReadOptions{Check: true, Path: path})},
		{"ReadLog keep read", readLog(ReadOptions{Keep: keepW})},
		{"ReadLog keep mapped", readLog(ReadOptions{Keep: keepW, Path: path})},
		{"FilterLog mapped", filterLog(&Filter{Kinds: 1 << KindWrite}, 2, false)},
		{"FilterLog all mapped", filterLog(&Filter{}, 2, false)},
		{"FilterLog 1 worker", filterLog(&Filter{Kinds: 1 << KindWrite}, 1, false)},
		{"FilterLog read parallel", filterLog(&Filter{Kinds: 1 << KindWrite}, 2, true)},
		{"FilterLog between", filterLog(&Filter{Between: [2]string{"x", "y"}}, 2, false)},
		{"Open CountKinds", func(*os.File) error {
			rd, err := Open(path)
			if err != nil {
				return err
			}
			defer rd.Close()
			rd.SetKeepGoing(true)
			_, err = CountKinds(rd)
			return err
		}},
	} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		err = tc.run(f)
		f.Close()
		if !errors.Is(err, ErrFormat) || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: error %v; want ErrFormat ending %q", tc.name, err, want)
		}
	}
}
