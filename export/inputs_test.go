package export

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	capdir "github.com/iotap/iotap/capture"
	"github.com/iotap/iotap/detect"
)

// psbRaw is the start of a raw Intel PT trace (PSB packets): detect
// recognises it, export writes its pt_stats.
var psbRaw = bytes.Repeat([]byte{0x02, 0x82}, 16)

// TestExportPathDetection: export recognises its inputs with package
// detect, as every command does. In a capture directory, files that are
// no trace are left out; given alone they are errors that say what the
// file is.
func TestExportPathDetection(t *testing.T) {
	events, err := os.ReadFile("../testdata/capture/events.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	wantEvents := int64(bytes.Count(events, []byte("\n")))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(events)
	zw.Close()

	dir := t.TempDir()
	capDir := filepath.Join(dir, "cap")
	os.Mkdir(capDir, 0o755)
	files := map[string][]byte{
		"events.ndjson.gz": gz.Bytes(),
		"pt.raw":           psbRaw,
		"notes.txt":        []byte("hello\nthis is not a trace\n"),
		"picture.png":      []byte("\x89PNG\r\n\x1a\n0000000000"),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(capDir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	x, err := New(Options{Dir: filepath.Join(dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := x.ExportPath(context.Background(), capDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Source != "events" || filepath.Base(rows[0].SourceFile) != "events.ndjson.gz" ||
		rows[1].Source != "pt" || rows[1].Format != "raw" || filepath.Base(rows[1].SourceFile) != "pt.raw" {
		t.Fatalf("capture directory exported as %+v, want events.ndjson.gz and pt.raw", rows)
	}
	if rows[0].Records != wantEvents || rows[0].Compression != "gzip" || rows[0].Loss != "" {
		t.Errorf("gzip events: %d records, compression %q, loss %q; want %d lines, gzip, no loss",
			rows[0].Records, rows[0].Compression, rows[0].Loss, wantEvents)
	}

	for _, c := range []struct {
		name     string
		notTrace bool   // the error matches detect.ErrNotTrace
		say      string // the error says
	}{
		{"notes.txt", true, "text"},
		{"picture.png", true, "a PNG image"},
	} {
		_, err := x.ExportPath(context.Background(), filepath.Join(capDir, c.name))
		if err == nil || errors.Is(err, detect.ErrNotTrace) != c.notTrace || !strings.Contains(err.Error(), c.say) {
			t.Errorf("%s: error %v, want one saying %q (ErrNotTrace: %v)", c.name, err, c.say, c.notTrace)
		}
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n *int64
}

func (c countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

// TestExportInputHook: Options.Input sees every exported input file once,
// with its size on disk, and the export reads all of its bytes through it
// (the CLI's progress line counts them), compressed or not.
func TestExportInputHook(t *testing.T) {
	dir := t.TempDir()
	read := map[string]*int64{}
	sizes := map[string]int64{}
	x, err := New(Options{Dir: filepath.Join(dir, "out"), Input: func(path string, size int64, r io.Reader) io.Reader {
		base := filepath.Base(path)
		if _, dup := read[base]; dup {
			t.Errorf("%s wrapped twice", base)
		}
		read[base], sizes[base] = new(int64), size
		return countReader{r, read[base]}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.ExportPath(context.Background(), "../testdata/capture"); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"events.ndjson", "mmio.log.zst", "usb.pcapng"} {
		fi, err := os.Stat(filepath.Join("../testdata/capture", name))
		if err != nil {
			t.Fatal(err)
		}
		if read[name] == nil {
			t.Errorf("%s: not wrapped (wrapped: %v)", name, sizes)
			continue
		}
		if sizes[name] != fi.Size() || *read[name] != fi.Size() {
			t.Errorf("%s: hook told %d bytes, %d read through it, file has %d", name, sizes[name], *read[name], fi.Size())
		}
	}
	if len(read) != 3 {
		t.Errorf("wrapped %d files, want the 3 traces: %v", len(read), sizes)
	}
}

// With 'capture --parquet', a source's loss is said once: in the
// capture's words when the capture counted it (the export's row repeats
// it from loss.json), in the export's when only reading the trace found
// it.
func TestUnrecorded(t *testing.T) {
	recorded := []capdir.SourceLoss{{Source: "usb", Lost: 3, Text: "usb: 3 events dropped by the kernel"}}
	rows := []CaptureRow{
		{Identity: Identity{SourceFile: "usb.pcapng"}, Source: "usb", Loss: "the capture records 3 events dropped by the kernel; recorded by the capture: usb: 3 events dropped by the kernel"},
		{Identity: Identity{SourceFile: "mmio.log"}, Source: "mmio"},
		{Identity: Identity{SourceFile: "events.ndjson"}, Source: "events", Loss: "2 unreadable lines skipped"},
	}
	got := Unrecorded(rows, recorded)
	want := []string{"events.ndjson: 2 unreadable lines skipped (recorded in the captures table)"}
	if !slices.Equal(got, want) {
		t.Errorf("Unrecorded: %q, want %q", got, want)
	}
	if got := Unrecorded(rows, nil); len(got) != 2 {
		t.Errorf("nothing recorded by the capture: %q, want both rows with a loss", got)
	}
}
