package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const mmioGolden = "../../mmiotrace/testdata/e1000-bind.log"

func runMMIO(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	code := exitCode(err, &errb)
	return out.String(), errb.String(), code
}

func TestMMIOReadRoundTrip(t *testing.T) {
	want, err := os.ReadFile(mmioGolden)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"a.log", "a.log.gz", "a.log.xz", "a.log.zst"} {
		p := filepath.Join(dir, name)
		if _, e, code := runMMIO(t, "mmio", "read", mmioGolden, "-o", p); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, e)
		}
		fi, _ := os.Stat(p)
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", name, fi.Mode().Perm())
		}
		// Reading the (compressed) copy back to stdout gives the original.
		out, e, code := runMMIO(t, "mmio", "read", p)
		if code != 0 || out != string(want) {
			t.Fatalf("%s: exit %d, identical %v: %s", name, code, out == string(want), e)
		}
	}
	// An existing world-readable file becomes 0600 when written.
	pre := filepath.Join(dir, "pre.log")
	os.WriteFile(pre, nil, 0o644)
	runMMIO(t, "mmio", "read", mmioGolden, "-o", pre)
	if fi, _ := os.Stat(pre); fi.Mode().Perm() != 0o600 {
		t.Errorf("existing output left %v", fi.Mode().Perm())
	}
	out, _, code := runMMIO(t, "mmio", "read", "--check", mmioGolden)
	if code != 0 || !strings.Contains(out, "lines: 11957") || !strings.Contains(out, "W:       5388") {
		t.Errorf("check: %d\n%s", code, out)
	}
	out, _, code = runMMIO(t, "mmio", "read", "--json", mmioGolden)
	if code != 0 || strings.Count(out, "\n") != 1+11957 || !strings.HasPrefix(out, `{"kind":"input"`) || !strings.Contains(out, `"kind":"mmio_pcidev"`) {
		t.Errorf("json: exit %d, %d lines", code, strings.Count(out, "\n"))
	}
}

func TestMMIOReadBadInput(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.log")
	os.WriteFile(p, []byte("VERSION 20070824\nR 4 1.000000 1 0x10 0x1 0x0 0\nW 9 junk\nMARK 0.000000 Lost 7 events.\n"), 0o600)
	_, e, code := runMMIO(t, "mmio", "read", "--keep-going=false", p, "-o", os.DevNull)
	if code != 1 || !strings.Contains(e, "line 3") {
		t.Errorf("bad line: exit %d: %s", code, e)
	}
	_, e, code = runMMIO(t, "mmio", "read", "--keep-going", p, "-o", os.DevNull)
	if code != 3 || !strings.Contains(e, "1 bad lines skipped") || !strings.Contains(e, "7 lost events") {
		t.Errorf("keep-going: exit %d: %s", code, e)
	}
	if _, _, code = runMMIO(t, "mmio", "read", "--keep-going", "--allow-loss", p, "-o", os.DevNull); code != 0 {
		t.Errorf("allow-loss: exit %d", code)
	}
}

func TestMMIOFilter(t *testing.T) {
	out, e, code := runMMIO(t, "mmio", "filter", "--bar", "0000:00:03.0/0+0xd8..0xdc", "--write", mmioGolden)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var writes int
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		switch {
		case strings.HasPrefix(l, "W "):
			writes++
			if !strings.Contains(l, " 0xfebc00d8 ") {
				t.Errorf("kept %q", l)
			}
		case strings.HasPrefix(l, "VERSION"), strings.HasPrefix(l, "PCIDEV"), strings.HasPrefix(l, "MAP "):
		default:
			t.Errorf("unexpected line %q", l)
		}
	}
	if writes != 5 {
		t.Errorf("%d IMC writes, want 5", writes)
	}
	// By PCI id, and the same in the sequential (marker window) path.
	byID, _, _ := runMMIO(t, "mmio", "filter", "--bar", "8086:100e/0+0xd8..0xdc", "--write", mmioGolden)
	seq, _, _ := runMMIO(t, "mmio", "filter", "--bar", "8086:100e/0+0xd8..0xdc", "--kind", "W,MARK", "--between", "iotap: bind", mmioGolden)
	if byID != out || !strings.Contains(seq, "MARK 8.112034 iotap: bind") || strings.Count(seq, "\nW ") != 5 {
		t.Errorf("by id or between differ:\n%s", seq)
	}
	// Compressed input gives the same result.
	zst := filepath.Join(t.TempDir(), "g.log.zst")
	runMMIO(t, "mmio", "read", mmioGolden, "-o", zst)
	if z, _, code := runMMIO(t, "mmio", "filter", "--bar", "0000:00:03.0/0+0xd8..0xdc", "--write", zst); code != 0 || z != out {
		t.Errorf("filter of the zstd copy differs (exit %d)", code)
	}
	for _, bad := range [][]string{
		{"--bar", "../../x/0"}, {"--width", "3"}, {"--addr", "0x10-0x5"}, {"--kind", "BOGUS"}, {"--value", "0x1=0x2"},
	} {
		if _, _, code := runMMIO(t, append(append([]string{"mmio", "filter"}, bad...), mmioGolden)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	if _, e, code := runMMIO(t, "mmio", "filter", "--bar", "0000:00:09.0/0", mmioGolden); code != 1 || !strings.Contains(e, "no PCIDEV") {
		t.Errorf("unknown device: exit %d: %s", code, e)
	}
}

func TestMMIOReplayDryRun(t *testing.T) {
	out, e, code := runMMIO(t, "mmio", "replay", "--dry-run", mmioGolden)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5388 || lines[0] != "W 4 0000:00:03.0/0+0xd8 0xfebc00d8 0xffffffff" {
		t.Errorf("%d writes, first %q", len(lines), lines[0])
	}
	out, _, _ = runMMIO(t, "mmio", "replay", "--dry-run", "--bar", "0000:00:03.0/0+0x100..0x104", mmioGolden)
	if strings.Count(out, "\n") != 3 {
		t.Errorf("range-limited dry run:\n%s", out)
	}
	if _, _, code := runMMIO(t, "mmio", "replay", mmioGolden); code != 2 {
		t.Errorf("replay without target: exit %d", code)
	}
	if _, _, code := runMMIO(t, "mmio", "replay", "--device", "0000:00:03.0/../..", mmioGolden); code != 2 {
		t.Errorf("bad device: exit %d", code)
	}
}

func TestMMIOStatsAndDiff(t *testing.T) {
	out, _, code := runMMIO(t, "mmio", "stats", mmioGolden)
	if code != 0 || !strings.Contains(out, "0000:00:03.0/0+0x8 ") || !strings.Contains(out, "reads 4842") {
		t.Errorf("stats: %d\n%s", code, out)
	}
	if !strings.Contains(out, "0000:00:03.0/0+0x8       STATUS     w4  reads 4842") || !strings.Contains(out, "IMC") {
		t.Errorf("stats without register names:\n%s", out)
	}
	// A polling loop, named.
	var b strings.Builder
	b.WriteString("VERSION 20070824\nPCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000\n")
	for i := 0; i < 1532; i++ {
		v := 0x80080783
		if i == 1531 {
			v |= 8
		}
		fmt.Fprintf(&b, "R 4 1.%06d 1 0xfebc0008 0x%x 0x0 0\n", i, v)
	}
	p := filepath.Join(t.TempDir(), "poll.log")
	os.WriteFile(p, []byte(b.String()), 0o600)
	out, _, _ = runMMIO(t, "mmio", "stats", p)
	if !strings.Contains(out, "line 3: read STATUS (0000:00:03.0/0+0x8) 1532 times until bit 3 set") {
		t.Errorf("polling loop:\n%s", out)
	}
	out, _, code = runMMIO(t, "mmio", "diff", mmioGolden, mmioGolden)
	if code != 0 || !strings.Contains(out, "0 same register with other value, 0 only in A, 0 only in B") {
		t.Errorf("self diff: %s", out)
	}
	data, _ := os.ReadFile(mmioGolden)
	mod := strings.Replace(string(data), "W 4 8.296099 1 0xfebc0100 0x0 0x0 0\n", "W 4 8.296099 1 0xfebc0100 0x2 0x0 0\nW 4 8.296100 1 0xfebc0104 0x1 0x0 0\n", 1)
	p = filepath.Join(t.TempDir(), "b.log")
	os.WriteFile(p, []byte(mod), 0o600)
	out, _, _ = runMMIO(t, "mmio", "diff", mmioGolden, p)
	if !strings.Contains(out, "~ A:17 B:17 W 0000:00:03.0/0+0x100 0x0 -> 0x2") || !strings.Contains(out, "+ B:18 W 4 0000:00:03.0/0+0x104 0x1") ||
		!strings.Contains(out, "1 same register with other value, 0 only in A, 1 only in B") {
		t.Errorf("diff:\n%s", out)
	}
}

func TestMMIOCaptureRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) { os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644) }
	write("available_tracers", "function nop\n")
	write("current_tracer", "nop\n")
	_, e, code := runMMIO(t, "mmio", "capture", "--tracefs", dir, "-o", filepath.Join(dir, "x.log"))
	if code != 1 || !strings.Contains(e, "CONFIG_MMIOTRACE") {
		t.Errorf("no mmiotrace: exit %d: %s", code, e)
	}
	write("available_tracers", "mmiotrace function nop\n")
	write("current_tracer", "function\n")
	_, e, code = runMMIO(t, "mmio", "capture", "--tracefs", dir, "-o", filepath.Join(dir, "x.log"))
	if code != 1 || !strings.Contains(e, `"function" is active`) || !strings.Contains(e, "--force") {
		t.Errorf("busy: exit %d: %s", code, e)
	}
	if _, _, code = runMMIO(t, "mmio", "capture", "--bind", "0000:00:03.0/../../x", "-o", "x"); code != 2 {
		t.Errorf("bad --bind: exit %d", code)
	}
	if _, _, code = runMMIO(t, "mmio", "capture"); code != 2 {
		t.Errorf("no -o: exit %d", code)
	}
}
