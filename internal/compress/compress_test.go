package compress

import (
	"bytes"
	"io"
	"os/exec"
	"testing"
)

// TestRoundTripAndTools writes each compression, detects it by content and
// reads it back; where the gzip/xz/zstd tools are installed, their output
// is read too and ours is read by them.
func TestRoundTripAndTools(t *testing.T) {
	sample := bytes.Repeat([]byte("VERSION 20070824\nR 4 1.000001 1 0xfebc0008 0x80080783 0x0 0\n"), 500)
	tools := map[Compression][]string{Gzip: {"gzip", "-c"}, XZ: {"xz", "-c"}, Zstd: {"zstd", "-q", "-c"}}
	for _, c := range []Compression{Gzip, XZ, Zstd} {
		var buf bytes.Buffer
		zw, err := NewWriter(&buf, c)
		if err != nil {
			t.Fatal(err)
		}
		zw.Write(sample)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		streams := map[string][]byte{"ours": buf.Bytes()}
		if _, err := exec.LookPath(tools[c][0]); err == nil {
			cmd := exec.Command(tools[c][0], tools[c][1:]...)
			cmd.Stdin = bytes.NewReader(sample)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v", tools[c][0], err)
			}
			streams[tools[c][0]] = out
			dec := exec.Command(tools[c][0], "-d", "-c")
			dec.Stdin = bytes.NewReader(buf.Bytes())
			if got, err := dec.Output(); err != nil || !bytes.Equal(got, sample) {
				t.Errorf("%s -d of our %v stream: %v, equal %v", tools[c][0], c, err, bytes.Equal(got, sample))
			}
		}
		for who, s := range streams {
			if d := Detect(s); d != c {
				t.Errorf("%s %v stream detected as %v", who, c, d)
			}
			r, got, done, err := Decompress(bytes.NewReader(s))
			if err != nil || got != c {
				t.Fatalf("%s %v: Decompress: %v, %v", who, c, got, err)
			}
			b, err := io.ReadAll(r)
			done()
			if err != nil || !bytes.Equal(b, sample) {
				t.Errorf("%s %v: read back %d bytes, err %v", who, c, len(b), err)
			}
		}
	}
	r, c, done, err := Decompress(bytes.NewReader(sample))
	defer done()
	if b, _ := io.ReadAll(r); err != nil || c != None || !bytes.Equal(b, sample) {
		t.Errorf("plain input: %v %v", c, err)
	}
	if _, c, _, err := Decompress(bytes.NewReader([]byte{0x1f, 0x8b, 0, 1, 2})); err == nil {
		t.Errorf("garbage after the gzip magic: no error (%v)", c)
	}
	for name, want := range map[string]Compression{"a.log.gz": Gzip, "a.XZ": XZ, "a.zst": Zstd, "a.log": None} {
		if got := FromName(name); got != want {
			t.Errorf("FromName(%q) = %v, want %v", name, got, want)
		}
	}
}
