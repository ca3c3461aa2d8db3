package cut

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/mapfile"
	"github.com/iotap/iotap/internal/timerange"
)

// cutAtFirstRead is a meter (CutFile, IndexFile) that cuts the file at
// path to size bytes at the first read (another process truncating the
// trace while it is read).
func cutAtFirstRead(t *testing.T, path string, size int64) func(io.ReaderAt, int64) io.ReaderAt {
	return func(ra io.ReaderAt, _ int64) io.ReaderAt {
		return &cutterAt{t: t, ra: ra, path: path, size: size}
	}
}

type cutterAt struct {
	t    *testing.T
	ra   io.ReaderAt
	path string
	size int64
	done bool
}

func (c *cutterAt) ReadAt(p []byte, off int64) (int, error) {
	if !c.done {
		c.done = true
		if err := os.Truncate(c.path, c.size); err != nil {
			c.t.Fatal(err)
		}
	}
	return c.ra.ReadAt(p, off)
}

// TestShrunkWhileRead: a plain trace cut shorter while cut or index
// reads it ends in the error the mapped readers give ("FILE: truncated
// while reading at offset N", a *mapfile.FaultError at or past the cut,
// the file named once), not a clean end of a shorter trace: for a
// usbmon text capture, a mmiotrace log and a pcapng, cut at a line or
// block boundary, where the shorter file is a whole trace of its own.
func TestShrunkWhileRead(t *testing.T) {
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	text := bytes.Repeat(read("../testdata/usbmon/lab-0u.txt"), 200)
	log := read("../testdata/mmiotrace/e1000-probe.log")
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"usbmon text", text},
		{"mmiotrace", log},
	} {
		// At a line's end: the file then holds a whole trace.
		at := int64(bytes.LastIndexByte(tc.data[:len(tc.data)/2], '\n') + 1)
		p := filepath.Join(t.TempDir(), "trace")
		for _, job := range []string{"index", "cut"} {
			if err := os.WriteFile(p, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			var err error
			switch job {
			case "index":
				_, _, err = IndexFile(context.Background(), p, 64<<10, cutAtFirstRead(t, p, at))
			case "cut":
				_, err = CutFile(context.Background(), p, io.Discard, false, cutAtFirstRead(t, p, at), Options{})
			}
			var fe *mapfile.FaultError
			if !errors.As(err, &fe) || fe.File != p || fe.Offset < at || strings.Count(err.Error(), p) != 1 {
				t.Errorf("%s of a %s cut to %d bytes while read: %v; want %s: truncated while reading at offset N >= %d", job, tc.name, at, err, p, at)
			}
		}
	}
}

// TestCutReadsOnce: a cut without an index reads its input once, its
// head too (the format's sniff and the clock's first records read it
// before the cut does): BytesRead is the file's size, with a window
// from the start (which needs the clock) and an absolute one, for
// inputs smaller and larger than the head kept (headMax). The files were
// read more than twice over (BytesRead 2.6 times a pcapng's size).
func TestCutReadsOnce(t *testing.T) {
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	log := read("../testdata/mmiotrace/e1000-probe.log")
	for name, data := range map[string][]byte{
		"pcapng":    read("../testdata/usbmon/lab-capture.pcapng"),
		"usbmon":    read("../testdata/usbmon/lab-0u.txt"),
		"mmio":      log,
		"mmio-big":  bytes.Repeat(log, 6), // 2.9 MB, over headMax
		"ndjson":    read("../testdata/capture/events.ndjson"),
		"usbmon-4m": bytes.Repeat(read("../testdata/usbmon/lab-0u.txt"), 450),
	} {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, w := range [][2]string{{"0", "2"}, {"@0", "@100000"}} {
			spec, err := timerange.ParseSpec(w[0], w[1])
			if err != nil {
				t.Fatal(err)
			}
			res, err := CutFile(context.Background(), p, io.Discard, false, nil, Options{Window: spec})
			if err != nil || res.Events == 0 && w[0] == "0" || res.BytesRead != int64(len(data)) {
				t.Errorf("%s %s..%s: %v, %+v; want %d bytes read", name, w[0], w[1], err, res, len(data))
			}
		}
	}
}
