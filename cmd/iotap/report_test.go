package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReportBundledSamples(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"report", "../../testdata"}, &out, &errb); err != nil {
		t.Fatalf("report: %v\nstderr: %s", err, errb.String())
	}
	s := out.String()
	for _, want := range []string{
		"== ../../testdata/mmiotrace/e1000-probe.log: mmio (mmiotrace log)",
		"== ../../testdata/usbmon/lab-capture.pcapng: usb (usbmon pcapng)",
		"== ../../testdata/usbmon/lab-0u.txt: usb (usbmon 1u)",
		"== ../../testdata/usbmon/lab-hidbus-t.txt: usb (usbmon 1t)",
		"== ../../testdata/usbmon/lab-usbmon0.bin: usb (usbmon binary)",
		"== ../../testdata/capture/usb.pcapng: usb (usbmon pcapng)",
		"== ../../testdata/capture/mmio.log.zst: mmio (mmiotrace log)",
		"== ../../testdata/capture/events.ndjson: events (user_events NDJSON)",
		"0000:00:03.0/0+0xd8", // the e1000's IMC writes, from mmio stats
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(s, "README.md:") || !strings.Contains(s, "not traces") {
		t.Errorf("README files must be listed as not traces, not read:\n%s", s)
	}
}

// The report's timeline of all bundled samples aligns the traces of the
// all-sources capture (testdata/capture) with its clocks.json, and only
// those: the older samples, recorded separately, are placed unaligned.
func TestReportBundledSamplesTimeline(t *testing.T) {
	out := filepath.Join(t.TempDir(), "all.pftrace")
	var stdout, errb bytes.Buffer
	if err := run(context.Background(), []string{"report", "../../testdata", "-o", out}, &stdout, &errb); err != nil {
		t.Fatalf("report: %v\nstderr: %s", err, errb.String())
	}
	s := stdout.String()
	if !strings.Contains(s, "clocks: ../../testdata/capture/clocks.json (the traces of ../../testdata/capture)") {
		t.Errorf("report does not name the capture's clocks file:\n%s", s)
	}
	aligned := map[string]string{} // input path -> ALIGNED column
	_, table, _ := strings.Cut(s, "== timeline: "+out)
	for _, l := range strings.Split(table, "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && strings.HasPrefix(f[1], "../../testdata/") {
			aligned[f[1]] = f[len(f)-1]
		}
	}
	for _, in := range []string{"usb.pcapng", "mmio.log.zst", "events.ndjson"} {
		if a := aligned["../../testdata/capture/"+in]; a != "ALIGNED" {
			t.Errorf("capture/%s: aligned column %q, want ALIGNED", in, a)
		}
	}
	for _, in := range []string{"usbmon/lab-capture.pcapng", "usbmon/lab-0u.txt", "mmiotrace/e1000-probe.log"} {
		if a := aligned["../../testdata/"+in]; a != "no" {
			t.Errorf("%s (not of the capture): aligned column %q, want no", in, a)
		}
	}
	if !strings.Contains(s, "3 of ") || !strings.Contains(s, " inputs aligned by their clocks file; the others are not aligned") {
		t.Errorf("report does not say which inputs are aligned:\n%s", s)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Errorf("no Perfetto trace written: %v", err)
	}
}

func TestReportLossExit3(t *testing.T) {
	dir := t.TempDir()
	log := "VERSION 20070824\nMARK 12.000001 Lost 7 events.\n"
	if err := os.WriteFile(filepath.Join(dir, "lossy.log"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"report", dir}, &out, &errb)
	if code := exitCode(err, &bytes.Buffer{}); code != exitDataLost {
		t.Fatalf("exit %d (%v), want %d\n%s", code, err, exitDataLost, out.String())
	}
	if !strings.Contains(out.String(), "LOSS") {
		t.Errorf("summary does not flag the loss:\n%s", out.String())
	}
	err = run(context.Background(), []string{"report", "--allow-loss", dir}, &out, &errb)
	if err != nil {
		t.Errorf("--allow-loss: %v", err)
	}
}

func TestReportMissingPath(t *testing.T) {
	err := run(context.Background(), []string{"report", filepath.Join(t.TempDir(), "nope")}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil {
		t.Fatal("no error for a missing path")
	}
}

// The output kind follows the extension (or --format); an unknown
// extension is a usage error, not a Perfetto file under a wrong name.
func TestReportOutputKinds(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args   []string
		file   string
		prefix string
		code   int
	}{
		{[]string{"-o", filepath.Join(dir, "r.html")}, "r.html", "<!DOCTYPE html>", 0},
		{[]string{"-o", filepath.Join(dir, "r.json")}, "r.json", `{"kind":"input"`, 0},
		{[]string{"--format", "html", "-o", filepath.Join(dir, "r.out")}, "r.out", "<!DOCTYPE html>", 0},
		{[]string{"-o", filepath.Join(dir, "r.txt")}, "r.txt", "", exitUsage},
		{[]string{"--format", "svg", "-o", filepath.Join(dir, "r2.html")}, "r2.html", "", exitUsage},
		{[]string{"--format", "html", "-o", filepath.Join(dir, "a.html"), "-o", filepath.Join(dir, "b.html")}, "a.html", "", exitUsage},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), append([]string{"report", "../../testdata/capture"}, tc.args...), &out, &errb)
		if code := exitCode(err, &bytes.Buffer{}); code != tc.code {
			t.Errorf("%v: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, tc.file))
		if tc.code != 0 {
			if err == nil {
				t.Errorf("%v: %s written despite the error", tc.args, tc.file)
			}
			continue
		}
		if err != nil || !strings.HasPrefix(string(b), tc.prefix) {
			t.Errorf("%v: %s starts %.40q (%v), want %q", tc.args, tc.file, b, err, tc.prefix)
		}
		if st, err := os.Stat(filepath.Join(dir, tc.file)); err == nil && st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", tc.file, st.Mode().Perm())
		}
	}
}

// report --json's USB objects carry the same numbers, under the same
// names, as 'iotap usb stats --json' of each capture (plus the file).
func TestReportJSONMatchesUSBStats(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"report", "--json", "../../testdata/usbmon"}, &out, &errb); err != nil {
		t.Fatalf("report --json: %v\n%s", err, errb.String())
	}
	byTrace := map[string][]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q: %v", l, err)
		}
		if m["kind"] == "usb_endpoint" || m["kind"] == "usb_device" || m["kind"] == "usb_summary" {
			tr := m["file"].(string)
			delete(m, "file")
			byTrace[tr] = append(byTrace[tr], m)
		}
	}
	if len(byTrace) < 4 {
		t.Fatalf("USB objects of %d traces, want every capture of testdata/usbmon", len(byTrace))
	}
	for tr, objs := range byTrace {
		var so bytes.Buffer
		if err := run(context.Background(), []string{"usb", "stats", "--json", tr}, &so, &errb); err != nil {
			t.Fatalf("usb stats %s: %v", tr, err)
		}
		var want []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(so.String()), "\n") {
			var m map[string]any
			json.Unmarshal([]byte(l), &m)
			if m["kind"] != "input" {
				want = append(want, m)
			}
		}
		if !reflect.DeepEqual(objs, want) {
			t.Errorf("%s: report --json differs from usb stats --json:\n got %v\nwant %v", tr, objs, want)
		}
	}
}

// The timeline's warnings about inputs without a clocks file are folded
// into one line; -v prints each.
func TestReportFoldsWarnings(t *testing.T) {
	for _, verbose := range []bool{false, true} {
		args := []string{"report", "../../testdata", "-o", filepath.Join(t.TempDir(), "t.pftrace")}
		if verbose {
			args = append(args, "-v")
		}
		var out, errb bytes.Buffer
		if err := run(context.Background(), args, &out, &errb); err != nil {
			t.Fatal(err)
		}
		n := strings.Count(errb.String(), "no clocks file for this input")
		switch {
		case !verbose && (n != 1 || !strings.Contains(errb.String(), "6 inputs: no clocks file")):
			t.Errorf("warnings not folded:\n%s", errb.String())
		case verbose && n != 6:
			t.Errorf("-v: %d warnings, want 6:\n%s", n, errb.String())
		}
		if strings.Contains(out.String()+errb.String(), "try --sysfs") {
			t.Errorf("report names a flag it does not have (--sysfs)")
		}
	}
}

// Members of a bundle are named BUNDLE:MEMBER everywhere, never by the
// temporary directory they are read from.
func TestReportBundleNames(t *testing.T) {
	dir := t.TempDir()
	bundle := filepath.Join(dir, "b.tar.gz")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range []string{"usb.pcapng", "events.ndjson"} {
		b, err := os.ReadFile("../../testdata/capture/" + name)
		if err != nil {
			t.Fatal(err)
		}
		tw.WriteHeader(&tar.Header{Name: "cap/" + name, Mode: 0o600, Size: int64(len(b)), Typeflag: tar.TypeReg})
		tw.Write(b)
	}
	tw.Close()
	zw.Close()
	if err := os.WriteFile(bundle, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"report", bundle, "-o", filepath.Join(dir, "t.pftrace"), "-o", filepath.Join(dir, "r.html"), "-v"}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	html, _ := os.ReadFile(filepath.Join(dir, "r.html"))
	all := out.String() + errb.String() + string(html)
	if strings.Contains(all, "iotap-report-") {
		t.Errorf("output names the temporary directory:\n%s\n%s", out.String(), errb.String())
	}
	for _, want := range []string{"== " + bundle + ":usb.pcapng: usb", bundle + ":events.ndjson"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// report -o PAGE.html -o T.pftrace with a small --max-size splits the
// timeline as 'iotap timeline' does, says so, and the page links every
// window file written.
func TestReportLinksSplitTimeline(t *testing.T) {
	dir := t.TempDir()
	page, tl := filepath.Join(dir, "r.html"), filepath.Join(dir, "t.pftrace")
	var stdout, errb bytes.Buffer
	if err := run(context.Background(), []string{"report", "../../testdata/mmiotrace/e1000-probe.log", "-o", page, "-o", tl, "--max-size", "128KiB"}, &stdout, &errb); err != nil {
		t.Fatalf("report: %v\nstderr: %s", err, errb.String())
	}
	if !strings.Contains(stdout.String(), "the full detail is over --max-size 131072 bytes") {
		t.Errorf("report does not say the timeline was split:\n%s", stdout.String())
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "t.d", "*.pftrace"))
	if len(files) < 2 {
		t.Fatalf("windows %v", files)
	}
	for _, f := range append(files, tl) {
		rel, _ := filepath.Rel(dir, f)
		if !strings.Contains(string(html), `<a href="`+filepath.ToSlash(rel)+`">`) {
			t.Errorf("the page does not link %s", rel)
		}
	}
}

// report FILE on a file that is no trace fails as the readers do (exit 1,
// "iotap: FILE: not a trace iotap reads: ..."), with nothing printed on
// stdout; in a directory the file is listed as not a trace (exit 0).
func TestReportNamedNotATrace(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, want, _ := runUSB(t, "timeline", notes, "-o", filepath.Join(dir, "t.pftrace"))
	want = strings.Replace(want, "iotap: timeline: ", "iotap: ", 1)
	out, errs, code := runUSB(t, "report", notes)
	if code != 1 || out != "" || errs != want {
		t.Errorf("exit %d, stdout %q, stderr %q, want %q (timeline's words)", code, out, errs, want)
	}
	out, errs, code = runUSB(t, "report", dir)
	if code != 0 || !strings.Contains(out, "not traces (1):\n  "+notes+"  text (") {
		t.Errorf("a directory: exit %d: %s%s", code, out, errs)
	}
}
