package detect

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func zst(b []byte) []byte {
	w, _ := zstd.NewWriter(nil)
	return w.EncodeAll(b, nil)
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHead(t *testing.T) {
	mlog := read(t, "mmiotrace/e1000-probe.log")
	pcapng := read(t, "usbmon/lab-capture.pcapng")
	readme := read(t, "usbmon/README.md")
	events := read(t, "capture/events.ndjson")
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10")
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(i*131 + i>>3*7 + 13)
	}
	for _, tc := range []struct {
		name   string
		data   []byte
		kind   Kind
		format string
		err    string // substring of the error; "" for none
	}{
		{"mmiotrace log", mlog, MMIO, "mmiotrace log", ""},
		{"mmiotrace log, gzip", gz(mlog), MMIO, "mmiotrace log (gzip-compressed)", ""},
		{"mmiotrace log, zstd", zst(mlog), MMIO, "mmiotrace log (zstd-compressed)", ""},
		{"mmiotrace from trace_pipe", []byte("# tracer: mmiotrace\n#\nVERSION 20070824\n"), MMIO, "mmiotrace log", ""},
		{"usbmon pcapng", pcapng, USB, "usbmon pcapng", ""},
		{"usbmon pcapng, gzip", gz(pcapng), USB, "usbmon pcapng (gzip-compressed)", ""},
		{"usbmon 1u", read(t, "usbmon/lab-0u.txt"), USB, "usbmon 1u", ""},
		{"usbmon 1t", read(t, "usbmon/lab-hidbus-t.txt"), USB, "usbmon 1t", ""},
		{"usbmon 1u, gzip", gz(read(t, "usbmon/lab-0u.txt")), USB, "usbmon 1u (gzip-compressed)", ""},
		{"usbmon binary", read(t, "usbmon/lab-usbmon0.bin"), USB, "usbmon binary", ""},
		{"events", events, Events, "user_events NDJSON", ""},
		{"raw PT", bytes.Repeat([]byte{0x02, 0x82}, 16), PT, "raw Intel PT", ""},
		{"perf.data", append([]byte("PERFILE2\x68\x00\x00\x00\x00\x00\x00\x00"), make([]byte, 96)...), PT, "perf.data", ""},

		{"empty", nil, "", "", "not a trace iotap reads: empty"},
		{"PNG", png, "", "", "a PNG image"},
		{"random", random, "", "", "binary data"},
		{"README", readme, "", "", `text (line 3 is not an mmiotrace record: "Recorded by`},
		{"README.md.gz", gz(readme), "", "", "gzip-compressed text (line 3"},
		{"gzip of garbage", gz(random), "", "", "gzip-compressed binary data"},
		{"gzip of PNG", gz(png), "", "", "gzip-compressed a PNG image"},
		{"broken gzip", []byte{0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, "", "", "does not decompress"},
		{"bad first record", []byte("VERSION 20070824\nR 4 zz 1 0x1 0x2 0x3 0\n"), MMIO, "mmiotrace log", ""},
		{"bad record first", []byte("R 4 zz 1 0x1 0x2 0x3 0\nVERSION 20070824\n"), "", "", "line 1: bad mmiotrace line: R record: bad timestamp"},
		{"only comments", []byte("# a\n# b\n"), "", "", "no mmiotrace record in the first 2 lines"},
		{"JSON not events", []byte(`{"sources":{}}` + "\n"), "", "", `no "name" and "ts"`},
		{"pcap of ethernet", append([]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0}, make([]byte, 16)...), "", "", "not a usbmon capture"},
		{"pcapng cut in header", pcapng[:10], "", "", "not a trace"},
		{"damaged perf.data", []byte("PERFILE2\xff\xff\xff\xff\xff\xff\xff\xff0123456789abcdef"), "", "", "damaged perf.data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.data[:min(len(tc.data), HeadSize)]
			res, err := Head(h, len(tc.data) <= HeadSize)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrNotTrace) {
					t.Fatalf("Head = %v, %v; want error with %q", res, err, tc.err)
				}
				return
			}
			if err != nil || res.Kind != tc.kind || res.String() != tc.format {
				t.Fatalf("Head = %q (%s), %v; want %s %q", res, res.Kind, err, tc.kind, tc.format)
			}
		})
	}
}

func TestExpect(t *testing.T) {
	pcapng := read(t, "usbmon/lab-capture.pcapng")
	_, err := Expect(pcapng, true, MMIO)
	if err == nil || err.Error() != "not an mmiotrace log: it is usbmon pcapng (use 'iotap usb ...')" {
		t.Errorf("pcapng as mmio: %v", err)
	}
	_, err = Expect([]byte("hello world\n"), true, USB)
	if err == nil || !strings.HasPrefix(err.Error(), "not a usbmon capture: text") {
		t.Errorf("text as usb: %v", err)
	}
	if res, err := Expect(read(t, "mmiotrace/e1000-probe.log"), false, MMIO); err != nil || res.Kind != MMIO {
		t.Errorf("log as mmio: %v %v", res, err)
	}
}

// A head cut in the middle of a long log is still recognised: detection
// does not mistake the cut for a bad line.
func TestHeadCutAnywhere(t *testing.T) {
	mlog := read(t, "mmiotrace/e1000-probe.log")
	for n := 200; n < 4000; n += 37 {
		if res, err := Head(mlog[:n], false); err != nil || res.Kind != MMIO {
			t.Fatalf("head of %d bytes: %v %v", n, res, err)
		}
	}
	z := gz(mlog)
	for n := 200; n < len(z); n += len(z) / 20 {
		if res, err := Head(z[:n], false); err != nil || res.Kind != MMIO {
			t.Fatalf("gzip head of %d bytes: %v %v", n, res, err)
		}
	}
}

func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := File(dir); err == nil || !strings.Contains(err.Error(), "is a directory") || errors.Is(err, ErrNotTrace) {
		t.Errorf("directory: %v", err)
	}
	if _, err := File(filepath.Join(dir, "nope")); err == nil || !strings.Contains(err.Error(), "no such file") || errors.Is(err, ErrNotTrace) {
		t.Errorf("missing: %v", err)
	}
	loop := filepath.Join(dir, "loop")
	if os.Symlink("loop", loop) == nil {
		if _, err := File(loop); err == nil || !strings.Contains(err.Error(), "symbolic links") {
			t.Errorf("loop: %v", err)
		}
	}
}

func FuzzHead(f *testing.F) {
	for _, p := range []string{"mmiotrace/e1000-probe.log", "usbmon/lab-0u.txt", "usbmon/lab-capture.pcapng", "capture/events.ndjson", "usbmon/lab-usbmon0.bin"} {
		if b, err := os.ReadFile(filepath.Join("..", "testdata", p)); err == nil {
			f.Add(b[:min(len(b), 2048)], true)
		}
	}
	f.Add(gz([]byte("VERSION 20070824\n")), false)
	f.Add([]byte("\x89PNG\r\n\x1a\n"), true)
	f.Add([]byte{}, true)
	f.Fuzz(func(t *testing.T, data []byte, complete bool) {
		res, err := Head(data, complete)
		if err != nil {
			if !errors.Is(err, ErrNotTrace) || err.Error() == "" {
				t.Fatalf("error %v does not match ErrNotTrace", err)
			}
			return
		}
		if res.Kind == "" || res.Format == "" {
			t.Fatalf("empty result %+v", res)
		}
		// Expect agrees with Head.
		if _, err := Expect(data, complete, res.Kind); err != nil {
			t.Fatalf("Head says %v, Expect(%s) says %v", res, res.Kind, err)
		}
		other := MMIO
		if res.Kind == MMIO {
			other = USB
		}
		if _, err := Expect(data, complete, other); err == nil {
			t.Fatalf("Head says %v, Expect(%s) accepts too", res, other)
		}
	})
}
