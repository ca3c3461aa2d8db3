package timeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/iotap/iotap/detect"
)

// FuzzExport feeds arbitrary bytes as an input of every kind package
// detect recognises: Export must return an error or a trace that decodes, never
// panic or leave a slice open.
func FuzzExport(f *testing.F) {
	f.Add([]byte(eventsNDJSON))
	f.Add([]byte(eventsNDJSONSchema1))
	f.Add([]byte("VERSION 20070824\nPCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000\nMAP 1.0 1 0xfebc0000 0x0 0x20000 0x0 0\nR 4 1.5 1 0xfebc0008 0x1 0x0 0\nMARK 2.0 x\nUNMAP 3.0 1 0x0 0\n"))
	f.Add([]byte("a0 1000 S Bi:1:002:1 -115 512 <\na0 2000 C Bi:1:002:1 0 4 = 01020304\n"))
	f.Add([]byte{0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x19, 1, 2, 3, 4, 5, 6, 7, 0x02, 0xf3})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := detect.Head(data, len(data) < detect.HeadSize); err != nil {
			return
		}
		p := filepath.Join(dir, "in")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := Export(context.Background(), &buf, []string{p}, Options{}); err != nil {
			return
		}
		tr := decodeTrace(t, buf.Bytes())
		checkSlicesNest(t, tr)
	})
}

func FuzzReadClocks(f *testing.F) {
	f.Add([]byte(`{"common":"x","sources":{"usb":{"offset_ns":5,"tsc":{"time_zero":1,"time_mult":3,"time_shift":2}}},"markers":[{"name":"m","ns":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ReadClocks(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, s := range c.Sources {
			s.TSC.ToNS(1 << 62)
		}
		var buf bytes.Buffer
		if err := WriteClocks(&buf, c); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadClocks(&buf); err != nil {
			t.Fatalf("written clocks do not read back: %v", err)
		}
	})
}
