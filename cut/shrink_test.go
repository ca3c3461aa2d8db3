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
