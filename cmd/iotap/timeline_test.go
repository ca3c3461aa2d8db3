package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// protocCount decodes a Perfetto trace with protoc and Perfetto's
// published proto and counts occurrences of each want string.
func protocText(t *testing.T, path string) string {
	t.Helper()
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc not found: install protobuf-compiler (apt-get install protobuf-compiler) to check traces against Perfetto's proto")
	}
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command(protoc, "--proto_path=../../testdata/perfetto", "--decode", "perfetto.protos.Trace", "perfetto_trace.proto")
	cmd.Stdin = in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("protoc: %v\n%s", err, stderr.String())
	}
	return string(out)
}

func countPrefixed(t *testing.T, path, sub string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), sub)
}

func TestTimelineCLI(t *testing.T) {
	dir := t.TempDir()
	ev := filepath.Join(dir, "ev.ndjson")
	os.WriteFile(ev, []byte(`{"name":"app","ts":5,"cpu":0,"pid":1,"fields":{"n":1}}`+"\n"), 0o600)
	out := filepath.Join(dir, "t.pftrace")
	usbIn := "../../testdata/usbmon/lab-0u.txt"
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"timeline", usbIn, "../../testdata/mmiotrace/e1000-probe.log", ev, "-o", out}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("timeline: %v\n%s", err, stderr.String())
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if !strings.Contains(stderr.String(), "not aligned") || !strings.Contains(stdout.String(), "wrote "+out) {
		t.Errorf("stdout %q stderr %q", stdout.String(), stderr.String())
	}
	text := protocText(t, out)
	subs := countPrefixed(t, usbIn, " S ")
	if got := strings.Count(text, "type: TYPE_SLICE_BEGIN"); got != subs {
		t.Errorf("%d slices, the capture has %d submissions", got, subs)
	}
	if got := strings.Count(text, "type: TYPE_SLICE_END"); got != subs {
		t.Errorf("%d slice ends, want %d", got, subs)
	}
	if !strings.Contains(text, `name: "0000:00:03.0 BAR0 (e1000)"`) || !strings.Contains(text, `name: "app"`) {
		t.Error("tracks of the MMIO BAR or the user event missing")
	}
}

func TestTimelineCLIErrors(t *testing.T) {
	dir := t.TempDir()
	log := "../../testdata/mmiotrace/e1000-probe.log"
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"timeline", log}, exitUsage},
		{[]string{"timeline", log, "-o", filepath.Join(dir, "a"), "--db", "nosuchdb"}, exitUsage},
		{[]string{"timeline", log, "-o", log}, exitUsage},
		{[]string{"timeline", "../../testdata/usbmon/README.md", "-o", filepath.Join(dir, "b")}, exitFailure},
		{[]string{"timeline", log, "-o", filepath.Join(dir, "c"), "--clocks", log}, exitFailure},
	} {
		err := run(context.Background(), tc.args, &bytes.Buffer{}, &bytes.Buffer{})
		if code := exitCode(err, &bytes.Buffer{}); code != tc.code {
			t.Errorf("%v: exit %d (%v), want %d", tc.args, code, err, tc.code)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); !os.IsNotExist(err) {
		t.Errorf("a failed export leaves its output behind: %v", err)
	}

	lossy := filepath.Join(dir, "lossy.log")
	os.WriteFile(lossy, []byte("VERSION 20070824\nR 4 1.000000 1 0xfebc0008 0x1 0x0 0\nMARK 12.000001 Lost 7 events.\n"), 0o600)
	err := run(context.Background(), []string{"timeline", lossy, "-o", filepath.Join(dir, "d")}, &bytes.Buffer{}, &bytes.Buffer{})
	if code := exitCode(err, &bytes.Buffer{}); code != exitDataLost || !strings.Contains(err.Error(), "7 events lost") {
		t.Errorf("lossy input: exit %d (%v)", code, err)
	}
	if err := run(context.Background(), []string{"timeline", "--allow-loss", lossy, "-o", filepath.Join(dir, "d")}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Errorf("--allow-loss: %v", err)
	}

	// -o - writes the trace to stdout, the summary to stderr
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"timeline", "--allow-loss", lossy, "-o", "-"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(stdout.Bytes(), []byte{0x0a}) || !strings.Contains(stderr.String(), "wrote -") {
		t.Errorf("stdout %q... stderr %q", stdout.Bytes()[:8], stderr.String())
	}
}

func TestTimelineClocks(t *testing.T) {
	dir := t.TempDir()
	mmio := filepath.Join(dir, "mmio.log")
	os.WriteFile(mmio, []byte("VERSION 20070824\nR 4 10.000000 1 0xfebc0008 0x1 0x0 0\nMARK 10.500000 between\nW 4 11.000000 1 0xfebc00d8 0x1 0x0 0\n"), 0o600)
	ev := filepath.Join(dir, "ev.ndjson")
	os.WriteFile(ev, []byte(`{"name":"a","ts":400000000,"cpu":0,"pid":1,"fields":{}}`+"\n"+`{"name":"b","ts":600000000,"cpu":0,"pid":1,"fields":{}}`+"\n"), 0o600)
	clocks := filepath.Join(dir, "clocks.json")
	os.WriteFile(clocks, []byte(`{"common":"ftrace local","sources":{"mmio":{"offset_ns":0},"events":{"offset_ns":10000000000}}}`), 0o600)
	out := filepath.Join(dir, "t.pftrace")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"timeline", mmio, ev, "--clocks", clocks, "--json", "-o", out}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if stderr.Len() != 0 || !strings.Contains(stdout.String(), `"aligned":true`) {
		t.Errorf("stdout %s stderr %s", stdout.String(), stderr.String())
	}
	text := protocText(t, out)
	// timestamps in file order: R 10.0, a 10.4, marker 10.5 (x3), b 10.6, W 11.0
	var ts []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "timestamp: ") {
			ts = append(ts, strings.TrimPrefix(l, "timestamp: "))
		}
	}
	want := "10000000000 10400000000 10500000000 10500000000 10500000000 10600000000 11000000000"
	if strings.Join(ts, " ") != want {
		t.Errorf("timestamps %v, want %s", ts, want)
	}
}

func TestReportTimeline(t *testing.T) {
	dir := t.TempDir()
	// a bundle holding an mmiotrace log, as mmio capture --bundle writes
	log, err := os.ReadFile("../../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(dir, "bundle.tar.gz")
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "x/mmiotrace.log", Mode: 0o600, Size: int64(len(log)), Typeflag: tar.TypeReg})
	tw.Write(log)
	tw.WriteHeader(&tar.Header{Name: "../../evil", Mode: 0o600, Size: 4, Typeflag: tar.TypeReg})
	tw.Write([]byte("evil"))
	tw.Close()
	zw.Close()
	os.WriteFile(bundle, b.Bytes(), 0o600)

	out := filepath.Join(dir, "r.pftrace")
	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"report", bundle, "../../testdata/usbmon/lab-capture.pcapng", "-o", out}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("report: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	s := stdout.String()
	for _, want := range []string{"== bundle " + bundle + ": mmiotrace.log evil", "mmio (mmiotrace log)", "== timeline: " + out, "wrote " + out} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "..", "evil")); err == nil {
		t.Error("a bundle member escaped the extraction directory")
	}
	st, err := os.Stat(out)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("output %v %v", st, err)
	}
	text := protocText(t, out)
	if !strings.Contains(text, `name: "0000:00:03.0 BAR0 (e1000)"`) || !strings.Contains(text, "TYPE_SLICE_BEGIN") {
		t.Error("the report's timeline lacks the MMIO or USB tracks")
	}
}

func TestTimelineDirectory(t *testing.T) {
	dir := t.TempDir()
	log, _ := os.ReadFile("../../testdata/mmiotrace/e1000-probe.log")
	os.WriteFile(filepath.Join(dir, "mmio.log"), log, 0o600)
	os.WriteFile(filepath.Join(dir, "events.ndjson"), []byte(`{"name":"a","ts":11900000000,"cpu":0,"pid":1,"fields":{}}`+"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a trace\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "clocks.json"), []byte(`{"sources":{"mmio":{"offset_ns":0},"events":{"offset_ns":0}}}`), 0o600)
	out := filepath.Join(t.TempDir(), "t.pftrace")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"timeline", dir, "--json", "-o", out}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	s := stdout.String()
	if !strings.Contains(s, `"aligned":true`) || !strings.Contains(s, "events.ndjson") || !strings.Contains(s, "mmio.log") || strings.Contains(s, "notes.txt") {
		t.Errorf("directory input: %s\n%s", s, stderr.String())
	}
	if !strings.Contains(stderr.String(), "clocks from "+filepath.Join(dir, "clocks.json")) {
		t.Errorf("stderr %s", stderr.String())
	}
	empty := t.TempDir()
	if err := run(context.Background(), []string{"timeline", empty, "-o", out}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no trace") {
		t.Errorf("empty directory: %v", err)
	}
}

// withStdin runs f with os.Stdin a pipe fed with data (as a shell pipe
// would be: read once, as it comes).
func withStdin(t *testing.T, data []byte, f func()) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		w.Write(data)
		w.Close()
	}()
	old := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = old; r.Close() }()
	f()
}

// "timeline -" reads a trace from standard input: the same tracks,
// slices and events as the file itself, for each kind of source, and the
// trace decodes with protoc.
func TestTimelineStdin(t *testing.T) {
	dir := t.TempDir()
	for _, in := range []string{
		"../../testdata/capture/usb.pcapng",
		"../../testdata/capture/mmio.log.zst",
		"../../testdata/capture/events.ndjson",
	} {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		fileOut, pipeOut := filepath.Join(dir, "file.pftrace"), filepath.Join(dir, "pipe.pftrace")
		want, stderr, code := runUSB(t, "timeline", "--json", in, "-o", fileOut)
		if code != 0 {
			t.Fatalf("timeline %s: exit %d %s", in, code, stderr)
		}
		var got string
		withStdin(t, data, func() {
			got, stderr, code = runUSB(t, "timeline", "--json", "-", "-o", pipeOut)
		})
		if code != 0 {
			t.Fatalf("timeline - < %s: exit %d %s", in, code, stderr)
		}
		// The byte counts differ by the length of the name in the
		// tracks' descriptions.
		bytesField := regexp.MustCompile(`"bytes":[0-9]+`)
		want = bytesField.ReplaceAllString(strings.ReplaceAll(want, in, "-"), "")
		if want != bytesField.ReplaceAllString(got, "") {
			t.Errorf("timeline - < %s differs from the file's:\n%s\n%s", in, want, got)
		}
		if !strings.Contains(protocText(t, pipeOut), "track_event") {
			t.Errorf("%s: no track events in the trace read from stdin", in)
		}
	}
	_, stderr, code := runUSB(t, "timeline", "-", "-", "-o", filepath.Join(dir, "x.pftrace"))
	if code != exitUsage || !strings.Contains(stderr, "once") {
		t.Errorf("timeline - -: exit %d %q", code, stderr)
	}
}

// TestTimelineMaxSize: --max-size wires the split export (the behaviour is
// tested in package timeline): an overview, windows under the bound in
// FILE.d/, the bucket width and windows printed; bad sizes are usage
// errors.
func TestTimelineMaxSize(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t.pftrace")
	stdout, stderr, code := runIotap(t, "timeline", "../../testdata/mmiotrace/e1000-probe.log", "-o", out, "--max-size", "300KiB")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "buckets of") || !strings.Contains(stdout, "0001.pftrace") || !strings.Contains(stdout, "windows in "+filepath.Join(dir, "t.d")) {
		t.Errorf("stdout %q", stdout)
	}
	ents, err := os.ReadDir(filepath.Join(dir, "t.d"))
	if err != nil || len(ents) < 3 {
		t.Fatalf("t.d: %v, %d files", err, len(ents))
	}
	for _, e := range ents {
		fi, _ := e.Info()
		if fi.Size() > 300<<10 {
			t.Errorf("%s: %d bytes", e.Name(), fi.Size())
		}
	}
	for _, bad := range [][]string{{"--max-size", "1K"}, {"--max-size", "ten"}, {"--max-size", "1M", "-o", "-"}} {
		args := append([]string{"timeline", "../../testdata/mmiotrace/e1000-probe.log", "-o", out}, bad...)
		if _, stderr, code := runIotap(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage): %s", bad, code, stderr)
		}
	}
}

// timeline -o LINK refuses the link as report -o LINK does (and every
// output: internal/outfile), with one message and exit code, leaving the
// link as it was.
func TestTimelineReportRefuseLink(t *testing.T) {
	dir := t.TempDir()
	var msgs []string
	for _, c := range [][]string{
		{"timeline", "../../testdata/capture", "-o"},
		{"timeline", "--max-size", "0", "../../testdata/capture", "-o"},
		{"report", "../../testdata/capture", "-o"},
	} {
		for _, name := range []string{"t.pftrace", "t.html"} {
			if c[0] == "timeline" && name == "t.html" {
				continue
			}
			link := filepath.Join(dir, name)
			os.Remove(link)
			if err := os.Symlink(filepath.Join(dir, "target"), link); err != nil {
				t.Fatal(err)
			}
			_, errs, code := runUSB(t, append(c, link)...)
			if code != 1 || !strings.Contains(errs, "\niotap: "+link+" is a symbolic link: ") && !strings.HasPrefix(errs, "iotap: "+link+" is a symbolic link: ") {
				t.Errorf("%v %s: exit %d: %s", c, name, code, errs)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("%v %s: the link was replaced", c, name)
			}
			msgs = append(msgs, errs[strings.LastIndex(errs, "iotap: "):])
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("left: %v", ents)
	}
	for _, m := range msgs[1:] {
		if strings.ReplaceAll(m, "t.html", "t.pftrace") != msgs[0] {
			t.Errorf("%q, not %q", m, msgs[0])
		}
	}
}
