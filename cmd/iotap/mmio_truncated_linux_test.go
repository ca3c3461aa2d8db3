package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestMMIONamesTruncatedWhileRead: 'mmio names' (text, --json) of a plain
// log cut shorter while read ends with exit 1 and one message naming the
// input once, with the offset past the cut: "iotap: mmio names: PATH:
// truncated while reading at offset N", where it named the file twice
// ("mmio names: PATH: mmiotrace: read after line N: PATH: truncated ...").
func TestMMIONamesTruncatedWhileRead(t *testing.T) {
	one, err := os.ReadFile(mmioGolden)
	if err != nil {
		t.Fatal(err)
	}
	whole := bytes.Repeat(one, (6<<20)/len(one)+1)
	path := filepath.Join(t.TempDir(), "growing.log")
	page := int64(os.Getpagesize())
	re := regexp.MustCompile(`^iotap: (mmio \w+): (.*): truncated while reading at offset (\d+)\n$`)
	for _, args := range [][]string{{"mmio", "names"}, {"mmio", "names", "--json"}} {
		if err := os.WriteFile(path, whole, 0o600); err != nil {
			t.Fatal(err)
		}
		w := &cutOnWrite{t: t, path: path, size: 1 << 20}
		if args[len(args)-1] == "--json" {
			w.skip = 1 // the "input" record
		}
		var errb bytes.Buffer
		err := run(context.Background(), append(args, path), w, &errb)
		code := exitCode(err, &errb)
		m := re.FindStringSubmatch(errb.String())
		if code != exitFailure || m == nil || m[1] != args[0]+" "+args[1] || m[2] != path {
			t.Errorf("%q: exit %d, stderr %q; want exit 1 and %q", args, code, errb.String(), "iotap: mmio "+args[1]+": "+path+": truncated while reading at offset N")
			continue
		}
		if off, _ := strconv.ParseInt(m[3], 10, 64); off < (w.size+page-1)/page*page {
			t.Errorf("%q: offset %d, before the end of the cut file (%d bytes)", args, off, w.size)
		}
	}
}

// TestMMIOStatsErrorPrefix: an error of 'mmio stats' reading the log has
// the command's prefix and names the input, as 'mmio names' words it:
// "iotap: mmio stats: PATH: mmiotrace: line 101: ...", where it was
// "iotap: mmiotrace: line 101: ...".
func TestMMIOStatsErrorPrefix(t *testing.T) {
	lines, err := os.ReadFile(mmioGolden)
	if err != nil {
		t.Fatal(err)
	}
	all := bytes.SplitAfter(lines, []byte("\n"))
	bad := append(bytes.Join(all[:100], nil), "R 4 bad line\n"...)
	path := filepath.Join(t.TempDir(), "bad.log")
	if err := os.WriteFile(path, append(bad, bytes.Join(all[100:], nil)...), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"stats", "names"} {
		_, stderr, code := runIotap(t, "mmio", cmd, "--keep-going=false", path)
		if want := "iotap: mmio " + cmd + ": " + path + ": mmiotrace: line 101: "; code != exitFailure || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("mmio %s: exit %d, stderr %q; want exit 1 and one line starting %q", cmd, code, stderr, want)
		}
	}
}
