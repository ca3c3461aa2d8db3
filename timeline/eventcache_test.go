package timeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMMIOEventCacheTransparent checks that writing repeated MMIO accesses
// as copies of their first encoding (EventCache) changes no byte of the
// output: the lab's e1000 log repeated with a loss in the middle (the
// Writer forgets its interned strings there) and split into windows (each
// file interns and declares again), exported with and without the cache.
func TestMMIOEventCacheTransparent(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "e1000.log")
	bigMMIOLog(t, log, 4, 2)
	export := func(name string, off bool) map[string][]byte {
		noEventCache = off
		defer func() { noEventCache = false }()
		out := filepath.Join(dir, name, "t.pftrace")
		if err := os.Mkdir(filepath.Dir(out), 0o700); err != nil {
			t.Fatal(err)
		}
		st, err := ExportSplit(context.Background(), out, []string{log}, Options{}, SplitOptions{MaxSize: 256 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if !st.Split || len(st.Index.Windows) < 3 {
			t.Fatalf("want a split into several windows: %+v", st.Index)
		}
		files := map[string][]byte{}
		filepath.WalkDir(filepath.Dir(out), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				rel, _ := filepath.Rel(filepath.Dir(out), p)
				files[rel] = b
			}
			return nil
		})
		return files
	}
	with, without := export("cache", false), export("nocache", true)
	if len(with) != len(without) {
		t.Fatalf("%d files with the cache, %d without", len(with), len(without))
	}
	for name, b := range without {
		if name == "t.d/index.json" {
			continue // names the overview by path
		}
		if !bytes.Equal(with[name], b) {
			t.Errorf("%s differs with the event cache (%d bytes, %d without)", name, len(with[name]), len(b))
		}
	}
}

// TestMMIOArgsMatchLog checks every access's arguments against the log's
// own text: the n-th read or write of the timeline has the n-th R/W
// line's value, width and offset in its BAR (e1000 BAR0 at 0xfebc0000),
// and every access to a register with one value has the same decoding.
func TestMMIOArgsMatchLog(t *testing.T) {
	const path = "../testdata/mmiotrace/e1000-probe.log"
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := Export(context.Background(), &buf, []string{path}, Options{}); err != nil {
		t.Fatal(err)
	}
	tr := decodeTrace(t, buf.Bytes())
	var evs []dEvent
	for _, e := range tr.events {
		if e.cat == "mmio" && e.args["value"] != nil {
			evs = append(evs, e)
		}
	}
	n := 0
	decoded := map[string]any{}
	for _, l := range strings.Split(string(in), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || (f[0] != "R" && f[0] != "W") {
			continue
		}
		if n >= len(evs) {
			t.Fatalf("the log has more accesses than the timeline's %d", len(evs))
		}
		e := evs[n]
		n++
		addr, _ := strconv.ParseUint(f[4], 0, 64)
		val, _ := strconv.ParseUint(f[5], 0, 64)
		w, _ := strconv.ParseUint(f[1], 10, 64)
		if e.args["value"] != fmt.Sprintf("%#x", val) || e.args["width"] != w || e.args["offset"] != fmt.Sprintf("%#x", addr-0xfebc0000) || !strings.HasPrefix(e.name, f[0]) {
			t.Fatalf("access %d (%q): %s %v", n, l, e.name, e.args)
		}
		k := e.name + " " + f[5]
		if d, ok := decoded[k]; ok && d != e.args["decoded"] {
			t.Fatalf("%s decoded as %v and as %v", k, d, e.args["decoded"])
		}
		decoded[k] = e.args["decoded"]
	}
	if n != len(evs) || n == 0 {
		t.Errorf("%d accesses in the log, %d in the timeline", n, len(evs))
	}
	if d := decoded["R STATUS 0x80080783"]; d == nil || !strings.Contains(fmt.Sprint(d), "SPEED=1000") {
		t.Errorf("STATUS decoded as %v", d)
	}
}
