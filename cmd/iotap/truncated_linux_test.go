package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// cutOnWrite is a stdout that cuts the file at path to size bytes at its
// Write after the first skip ones: another process truncating an input
// (a log still being written, copied or rotated) while iotap reads it.
type cutOnWrite struct {
	t       *testing.T
	path    string
	size    int64
	skip, n int
	buf     bytes.Buffer
}

func (w *cutOnWrite) Write(b []byte) (int, error) {
	if w.n++; w.n == w.skip+1 {
		if err := os.Truncate(w.path, w.size); err != nil {
			w.t.Fatal(err)
		}
	}
	return w.buf.Write(b)
}

// runCut runs iotap with a cutOnWrite stdout and checks that it ends with
// exit 1 and one message naming the input and an offset past the cut.
func runCut(t *testing.T, w *cutOnWrite, args ...string) {
	t.Helper()
	var errb bytes.Buffer
	err := run(context.Background(), args, w, &errb)
	code := exitCode(err, &errb)
	m := regexp.MustCompile(`^iotap: (.*): truncated while reading at offset (\d+)\n$`).FindStringSubmatch(errb.String())
	if code != exitFailure || m == nil || m[1] != w.path {
		t.Fatalf("%q: exit %d, stderr %q: want exit 1 and %q", args, code, errb.String(), "iotap: "+w.path+": truncated while reading at offset N")
	}
	page := int64(os.Getpagesize())
	if off, _ := strconv.ParseInt(m[2], 10, 64); off < (w.size+page-1)/page*page {
		t.Errorf("offset %d, before the end of the cut file (%d bytes)", off, w.size)
	}
	if w.n <= w.skip {
		t.Errorf("the input was not cut while read")
	}
}

// TestMMIOReadTruncatedWhileRead: 'mmio read' (text, --json, --check)
// of a plain log (mapped from 1 MiB on) cut shorter while read.
func TestMMIOReadTruncatedWhileRead(t *testing.T) {
	one, err := os.ReadFile(mmioGolden)
	if err != nil {
		t.Fatal(err)
	}
	whole := bytes.Repeat(one, (6<<20)/len(one)+1)
	path := filepath.Join(t.TempDir(), "growing.log")
	for _, args := range [][]string{{"mmio", "read"}, {"mmio", "read", "--json"}, {"mmio", "read", "-c", "100000000"}} {
		if err := os.WriteFile(path, whole, 0o600); err != nil {
			t.Fatal(err)
		}
		w := &cutOnWrite{t: t, path: path, size: 1 << 20}
		if args[len(args)-1] == "--json" {
			w.skip = 1 // the "input" record, written before the log is mapped
		}
		runCut(t, w, append(args, path)...)
	}
}

// TestPTFlowTruncatedWhileRead: 'pt flow' of a raw trace (mapped) cut
// shorter while decoded. The code is one conditional branch to itself
// (jne .), the trace a PSB, the branch's address and TNT packets.
func TestPTFlowTruncatedWhileRead(t *testing.T) {
	dir := t.TempDir()
	const base = 0x401000
	code := filepath.Join(dir, "loop.bin")
	if err := os.WriteFile(code, []byte{0x75, 0xfe}, 0o600); err != nil {
		t.Fatal(err)
	}
	var enc intelpt.Encoder
	for len(enc.Bytes()) < 3<<20 {
		enc.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
		enc.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCSext48, Payload: base})
		enc.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
		if len(enc.Bytes()) < 100 {
			enc.Encode(intelpt.Packet{Kind: intelpt.KindTIPPGE, IPC: intelpt.IPCSext48, Payload: base})
		}
		for range 1000 {
			enc.Encode(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 6, Payload: 0x3f})
		}
	}
	trace := filepath.Join(dir, "growing.pt")
	if err := os.WriteFile(trace, enc.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &cutOnWrite{t: t, path: trace, size: 64 << 10}
	runCut(t, w, "pt", "flow", "--raw", fmt.Sprintf("%s:%#x", code, base), "--pt", trace)
}
