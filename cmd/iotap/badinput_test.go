package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// badCorpus is the bad-inputs corpus of the table test: every kind of
// file a user may hand iotap by mistake, plus cut copies of good traces.
type badCorpus struct {
	dir   string
	files map[string]string // name -> path
	good  map[string]string // source kind -> a good trace of it
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func newBadCorpus(t *testing.T) *badCorpus {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755) // the unprivileged runs must reach the files
	c := &badCorpus{dir: dir, files: map[string]string{}, good: map[string]string{}}
	put := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c.files[name] = p
		return p
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", p))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pcapng := read("usbmon/lab-capture.pcapng")
	mlog := read("mmiotrace/e1000-probe.log")
	var enc intelpt.Encoder
	for i := 0; i < 50; i++ {
		enc.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
		enc.Encode(intelpt.Packet{Kind: intelpt.KindTSC, Payload: uint64(1000 * (i + 1))})
		enc.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
		for j := 0; j < 20; j++ {
			enc.Encode(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 3, Payload: 5})
		}
	}
	pt := enc.Bytes()
	c.good["usb"] = put("good.pcapng", pcapng)
	c.good["mmio"] = put("good.log", mlog)
	c.good["pt"] = put("good.pt", pt)

	rnd := rand.New(rand.NewSource(12))
	random := make([]byte, 64<<10)
	rnd.Read(random)
	var img bytes.Buffer
	png.Encode(&img, image.NewGray(image.Rect(0, 0, 64, 64)))

	put("empty", nil)
	put("random.bin", random)
	put("image.png", img.Bytes())
	put("garbage.gz", gzipBytes(random[:4096]))
	put("README.md.gz", gzipBytes(read("usbmon/README.md")))
	put("events.ndjson", read("capture/events.ndjson"))
	for _, frac := range []int{3, 2} {
		put(fmt.Sprintf("cut-1of%d.pcapng", frac), pcapng[:len(pcapng)/frac])
		put(fmt.Sprintf("cut-1of%d.log", frac), mlog[:len(mlog)/frac])
		put(fmt.Sprintf("cut-1of%d.pt", frac), pt[:len(pt)/frac+1])
	}
	put("cut-end.pcapng", pcapng[:len(pcapng)-7])
	put("cut-end.log", mlog[:len(mlog)-7])
	unreadable := put("unreadable.pcapng", pcapng)
	os.Chmod(unreadable, 0o600)
	sub := filepath.Join(dir, "directory")
	os.Mkdir(sub, 0o755)
	c.files["directory"] = sub
	loop := filepath.Join(dir, "loop")
	os.Symlink("loop", loop)
	c.files["symlink-loop"] = loop
	return c
}

// sums returns the SHA-256 of every regular file under dir.
func sums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	m := map[string][32]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, err := os.ReadFile(p); err == nil {
				m[p] = sha256.Sum256(b)
			}
		}
		return nil
	})
	return m
}

// badCommands are the commands that read trace files: IN is the input,
// OUT an output file.
var badCommands = [][]string{
	{"usb", "read", "IN"},
	{"usb", "stats", "IN"},
	{"usb", "pair", "IN"},
	{"usb", "convert", "--format", "1u", "IN", "-o", "OUT"},
	{"mmio", "read", "--check", "IN"},
	{"mmio", "read", "IN", "-o", "OUT"},
	{"mmio", "filter", "--write", "IN", "-o", "OUT"},
	{"mmio", "names", "IN", "-o", "OUT"},
	{"mmio", "stats", "IN"},
	{"mmio", "diff", "GOODLOG", "IN"},
	{"pt", "dump", "IN"},
	{"pt", "stats", "IN"},
	{"timeline", "IN", "-o", "OUT"},
	{"report", "IN"},
}

func expand(args []string, in, out, goodLog string) []string {
	r := make([]string, len(args))
	for i, a := range args {
		switch a {
		case "IN":
			a = in
		case "OUT":
			a = out
		case "GOODLOG":
			a = goodLog
		}
		r[i] = a
	}
	return r
}

func TestBadInputsMatrix(t *testing.T) {
	c := newBadCorpus(t)
	before := sums(t, c.dir)
	names := make([]string, 0, len(c.files))
	for n := range c.files {
		names = append(names, n)
	}
	sort.Strings(names)
	outDir := t.TempDir()
	for _, cmd := range badCommands {
		for _, n := range names {
			args := expand(cmd, c.files[n], filepath.Join(outDir, "out"), c.good["mmio"])
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), args, &stdout, &stderr)
			code := exitCode(err, &stderr)
			msg := strings.ReplaceAll(strings.TrimSpace(stderr.String()), c.dir+"/", "")
			if i := strings.LastIndex(msg, "\n"); i >= 0 {
				msg = msg[i+1:]
			}
			if len(msg) > 150 {
				msg = msg[:150]
			}
			t.Logf("%-32s %-20s %3d %s", strings.Join(cmd, " "), n, code, msg)
		}
	}
	after := sums(t, c.dir)
	for p, s := range before {
		if after[p] != s {
			t.Errorf("%s changed", p)
		}
	}
	_ = exec.Command
	_ = syscall.Getuid
}
