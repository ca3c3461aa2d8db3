//go:build linux

package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/internal/mapfile/mapfiletest"
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
	// Not t.TempDir: its parent is 0700, and the unprivileged runs must
	// reach the files.
	dir, err := os.MkdirTemp("", "iotap-bad-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
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
	psbAt := func(n int) int { // offset of the n-th PSB packet
		off := 0
		for i := 0; i < n; i++ {
			off += bytes.Index(pt[off:], bytes.Repeat([]byte{2, 0x82}, 8)) + 16
		}
		return off - 16
	}
	for _, frac := range []int{3, 2} {
		put(fmt.Sprintf("cut-1of%d.pcapng", frac), pcapng[:len(pcapng)/frac])
		put(fmt.Sprintf("cut-1of%d.log", frac), mlog[:len(mlog)/frac])
		// Inside a PSB packet: a cut between packets cannot be seen.
		put(fmt.Sprintf("cut-1of%d.pt", frac), pt[:psbAt(50/frac)+5])
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
	// A capture directory of root's 0600 files (issue 12, item 4).
	capdir := filepath.Join(dir, "capdir")
	os.Mkdir(capdir, 0o755)
	for _, n := range []string{"usb.pcapng", "events.ndjson", "mmio.log.zst", "clocks.json"} {
		os.WriteFile(filepath.Join(capdir, n), read("capture/"+n), 0o600)
	}
	c.files["capdir"] = capdir
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

// want is the expected outcome of a command on an input: exit code and a
// piece of the last stderr line.
type want struct {
	code int
	msg  string
}

// badExpect says what a command reading traces of kind src ("usb",
// "mmio", "pt"; "any" for timeline and report) must do with each input.
func badExpect(cmd []string, src, input string) want {
	kindOf := map[string]string{"good.pcapng": "usb", "good.log": "mmio", "good.pt": "pt", "events.ndjson": "events",
		"unreadable.pcapng": "usb", "cut-1of2.pcapng": "usb", "cut-1of3.pcapng": "usb", "cut-end.pcapng": "usb",
		"cut-1of2.log": "mmio", "cut-1of3.log": "mmio", "cut-end.log": "mmio", "cut-1of2.pt": "pt", "cut-1of3.pt": "pt"}
	report := cmd[0] == "report"
	switch input {
	case "empty":
		return want{1, "empty"} // report too: a file named is read as a trace
	case "random.bin":
		return want{1, "binary data"}
	case "image.png":
		return want{1, "a PNG image"}
	case "garbage.gz":
		return want{1, "gzip-compressed binary data"}
	case "README.md.gz":
		return want{1, "gzip-compressed text"}
	case "directory":
		switch {
		case report:
			return want{1, "nothing to report"} // an empty directory
		case cmd[0] == "timeline":
			return want{1, "no trace in this directory"}
		}
		return want{1, "directory"}
	case "capdir":
		if report || cmd[0] == "timeline" {
			return want{0, ""}
		}
		return want{1, "directory"}
	case "symlink-loop":
		return want{1, "symbolic links"}
	}
	k := kindOf[input]
	cut := strings.HasPrefix(input, "cut-")
	if src != "any" && k != src {
		return want{1, "it is "}
	}
	if report && k == "events" {
		return want{0, ""}
	}
	if cut {
		if report {
			return want{3, "record lost data"}
		}
		// pt says "truncated tail" or "ends inside a packet".
		return want{3, map[string]string{"usb": "cut short", "mmio": "cut", "pt": ""}[k]}
	}
	return want{0, ""}
}

func badSource(cmd []string) string {
	switch cmd[0] {
	case "usb", "mmio", "pt":
		return cmd[0]
	}
	return "any"
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// TestBadInputs runs every command that reads traces on every input of
// the bad-inputs corpus: the exit code and message are the expected ones,
// nothing panics, no input changes, and no output replaces an input.
func TestBadInputs(t *testing.T) {
	c := newBadCorpus(t)
	before := sums(t, c.dir)
	outDir := t.TempDir()
	for _, cmd := range badCommands {
		for name, path := range c.files {
			out := filepath.Join(outDir, "out")
			os.Remove(out)
			args := expand(cmd, path, out, c.good["mmio"])
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), args, &stdout, &stderr)
			code := exitCode(err, &stderr)
			w := badExpect(cmd, badSource(cmd), name)
			msg := lastLine(stderr.String())
			if code != w.code || !strings.Contains(msg, w.msg) {
				t.Errorf("%s on %s: exit %d %q; want %d %q", strings.Join(cmd, " "), name, code, msg, w.code, w.msg)
			}
			if code == 1 && !strings.Contains(msg, filepath.Base(path)) {
				t.Errorf("%s on %s: the error %q does not name the input", strings.Join(cmd, " "), name, msg)
			}
			if code == 3 && cmd[0] != "report" && !strings.Contains(msg, "--allow-loss") {
				t.Errorf("%s on %s: loss %q does not say --allow-loss", strings.Join(cmd, " "), name, msg)
			}
		}
		// The same file as input and output: refused, exit 2.
		if expand(cmd, "IN", "OUT", "")[len(cmd)-1] == "OUT" {
			in := c.good[badSource(cmd)]
			if in == "" {
				in = c.good["usb"]
			}
			args := expand(cmd, in, in, c.good["mmio"])
			_, stderr, code := runUSB(t, args...)
			if code != exitUsage || !strings.Contains(stderr, "same file as an input") {
				t.Errorf("%s with -o the input: exit %d %q", strings.Join(cmd, " "), code, stderr)
			}
		}
	}
	// A cut trace is still decoded with --allow-loss: exit 0 and the
	// timeline is written.
	for _, in := range []string{"cut-1of2.pcapng", "cut-1of3.log", "cut-1of2.pt"} {
		out := filepath.Join(outDir, in+".pftrace")
		_, stderr, code := runUSB(t, "timeline", "--allow-loss", c.files[in], "-o", out)
		fi, err := os.Stat(out)
		if code != 0 || err != nil || fi.Size() < 100 || !strings.Contains(stderr, "warning") || !strings.Contains(stderr, "truncated") {
			t.Errorf("timeline --allow-loss %s: exit %d, %v, stderr %q", in, code, err, stderr)
		}
	}
	after := sums(t, c.dir)
	if len(after) != len(before) {
		t.Errorf("%d files before, %d after", len(before), len(after))
	}
	for p, s := range before {
		if after[p] != s {
			t.Errorf("input %s changed", p)
		}
	}
}

// TestBadInputFIFO: a named pipe is read once, never reopened, and never
// left with its writer blocked: garbage is "not a trace" (report lists it
// with the reason), a trace is decoded. Every run has a deadline: a
// command that opened the pipe twice, or refused it after opening it,
// would block here.
func TestBadInputFIFO(t *testing.T) {
	dir := t.TempDir()
	garbage := bytes.Repeat([]byte("not a trace at all\n"), 100)
	trace, err := os.ReadFile("../../testdata/capture/usb.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	perf, err := os.ReadFile("../../intelpt/testdata/libipt/two-cpus.perf.data")
	if err != nil {
		t.Fatal(err)
	}
	events, err := os.ReadFile("../../userevents/testdata/linuxtracepoints/perf.data")
	if err != nil {
		t.Fatal(err)
	}
	mlog := "../../testdata/mmiotrace/e1000-probe.log"
	mlogData, err := os.ReadFile(mlog)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.pftrace")
	for _, tc := range []struct {
		cmd  []string
		data []byte
		code int
		want string // in stderr, or in stdout when code is 0
	}{
		{[]string{"usb", "read"}, garbage, 1, "not a pcap, pcapng"},
		{[]string{"mmio", "read", "--check"}, garbage, 1, "fifo: not"},
		{[]string{"mmio", "stats"}, garbage, 1, "fifo: not"},
		{[]string{"mmio", "filter"}, garbage, 1, "fifo: not"},
		{[]string{"pt", "stats"}, garbage, 1, "fifo: not"},
		{[]string{"timeline", "-o", out}, garbage, 1, "fifo: not"},
		{[]string{"report"}, garbage, 1, "fifo: not a trace iotap reads: text (line 1 is not"},
		{[]string{"report"}, trace, 0, "usb  usbmon pcapng  FIFO  ok"},
		{[]string{"timeline", "-o", out}, trace, 0, "usb     FIFO  12 "},
		{[]string{"usb", "stats"}, trace, 0, "transfers"},
		// A perf.data is found by offsets: read whole from the one
		// open, as standard input is (the listing and loss of the file).
		{[]string{"pt", "dump"}, perf, 3, "iotap: pt dump: cpu 3: 1 overflow(s)"},
		{[]string{"pt", "stats"}, perf, 3, "iotap: pt stats: data lost: cpu 3: 1 overflow(s)"},
		{[]string{"pt", "dump", "--stream", "0"}, perf, 0, "# cpu 0: 35 bytes\n0000000000000000  psb\n"},
		{[]string{"report"}, perf, 3, "record lost data: FIFO"},
		{[]string{"events", "read"}, events, 1, "fifo: userevents: perf.data at byte 0: file-mode perf.data needs random access"},
		{[]string{"cut", "--from", "0", "--to", "100", "-o", out}, trace, 1, "fifo is not a regular file: cut reads its input more than once"},
		{[]string{"index"}, trace, 1, "fifo is not a regular file: cut reads its input more than once"},
		{[]string{"mmio", "diff", mlog}, mlogData, 0, "11945 identical, 0 same register"},
	} {
		fifo := mapfiletest.FIFO(t)
		name := strings.Join(tc.cmd, " ")
		writer := mapfiletest.FeedFIFO(fifo, tc.data, 20*time.Second)
		type result struct {
			stdout, stderr string
			code           int
		}
		done := make(chan result, 1)
		go func() {
			args := append(append([]string{}, tc.cmd...), fifo)
			stdout, stderr, code := runUSB(t, args...)
			done <- result{stdout, stderr, code}
		}()
		select {
		case r := <-done:
			got := r.stderr
			if tc.code == 0 {
				got = r.stdout
			}
			want := strings.ReplaceAll(tc.want, "FIFO", fifo)
			if r.code != tc.code || !strings.Contains(got, want) {
				t.Errorf("%s on a FIFO: exit %d (want %d), want %q in:\n%s\n%s", name, r.code, tc.code, want, r.stdout, r.stderr)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s on a FIFO: still running after 20 s (blocked on the pipe?)", name)
		}
		if err := <-writer; err != nil && !errors.Is(err, syscall.EPIPE) {
			t.Errorf("%s: the FIFO's writer: %v", name, err)
		}
	}
}

// TestBadInputsUnprivileged runs the commands as an unprivileged user on
// root's 0600 files: a permission error with the path and a remedy, never
// "not a trace" (issue 12, item 4). Skipped unless run as root with
// setpriv (util-linux, in every Debian).
func TestBadInputsUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create files an unprivileged user cannot read")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv not installed")
	}
	c := newBadCorpus(t)
	// The test binary, where the unprivileged user may run it.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(c.dir, "iotap.test")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(bin, b, 0o755)
	outDir := filepath.Join(c.dir, "out")
	os.Mkdir(outDir, 0o777)
	os.Chmod(outDir, 0o777)
	cmds := append(append([][]string{}, badCommands...), []string{"report", "CAPDIR"}, []string{"timeline", "CAPDIR", "-o", "OUT"})
	cmds = append(cmds, sweepCommands...) // the garbage sweep's too
	// The sweep's commands whose permission error gives no remedy (the
	// path and "permission denied" only): defects of other owners' files.
	noRemedy := map[string]bool{"events read": true, "pt flow": true, "pt calls": true}
	for _, cmd := range cmds {
		in := c.files["unreadable.pcapng"]
		if cmd[1] == "CAPDIR" {
			in = c.files["capdir"]
		}
		args := expand(cmd, in, filepath.Join(outDir, "out"), c.good["mmio"])
		for i, a := range args {
			if a == "CAPDIR" {
				args[i] = in
			}
			args[i] = strings.Replace(args[i], "GOODLOG", c.good["mmio"], 1)
		}
		os.RemoveAll(filepath.Join(outDir, "out"))
		run := exec.Command(setpriv, append([]string{"--reuid", "65534", "--regid", "65534", "--clear-groups", bin}, args...)...)
		run.Env = append(os.Environ(), "IOTAP_TEST_AS_MAIN=1")
		var stderr bytes.Buffer
		run.Stderr = &stderr
		err := run.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		msg := stderr.String()
		if code == 0 || code == 2 || !strings.Contains(msg, "permission denied") || strings.Contains(msg, "not a trace") {
			t.Errorf("unprivileged %s on %s: exit %d %q", strings.Join(cmd, " "), filepath.Base(in), code, msg)
		}
		if !strings.Contains(msg, in) {
			t.Errorf("unprivileged %s: %q does not name %s", strings.Join(cmd, " "), msg, in)
		}
		remedy := strings.Contains(msg, "sudo") || strings.Contains(msg, "owner")
		if name := strings.Join(cmd[:2], " "); remedy == noRemedy[name] {
			t.Errorf("unprivileged %s: remedy %v in %q (noRemedy lists %v)", strings.Join(cmd, " "), remedy, msg, noRemedy[name])
		}
	}
}

func TestMain(m *testing.M) {
	if os.Getenv("IOTAP_TEST_AS_MAIN") == "1" {
		main() // TestBadInputsUnprivileged runs this binary as iotap
		return
	}
	os.Exit(m.Run())
}

// sweepCommands are every command that reads a file (issue 11's garbage
// sweep): IN the input, OUT an output path, GOODLOG a good mmiotrace log.
var sweepCommands = [][]string{
	{"usb", "read", "IN"},
	{"usb", "stats", "IN"},
	{"usb", "pair", "IN"},
	{"usb", "convert", "--format", "1u", "IN", "-o", "OUT"},
	{"mmio", "read", "IN"},
	{"mmio", "read", "--json", "IN"},
	{"mmio", "stats", "IN"},
	{"mmio", "names", "IN"},
	{"mmio", "filter", "--write", "IN"},
	{"mmio", "diff", "GOODLOG", "IN"},
	{"mmio", "replay", "--dry-run", "IN"},
	{"events", "read", "IN"},
	{"pt", "dump", "IN"},
	{"pt", "stats", "IN"},
	{"pt", "flow", "--raw", "GOODLOG:0x1000", "--pt", "IN"},
	{"pt", "calls", "IN"},
	{"cut", "--from", "0", "--to", "100", "IN", "-o", "OUT"},
	{"index", "IN"},
	{"timeline", "IN", "-o", "OUT"},
	{"report", "IN"},
	{"export", "--parquet", "OUT", "IN"},
}

// sweepKnown are the outcomes of the sweep that break its rules (exit
// 1, 2 or 3, the last stderr line "iotap: ..." naming the input), by
// "command|input" ("command|*": every input), with the reason; they are
// defects of files this test's owner does not own, reported to their
// owners. A listed case that now follows the rules fails the test: take
// it off the list.
var sweepKnown = map[string]string{}

// sweepInputs adds the sweep's inputs to the corpus: a plain random file
// and a cut log over 1 MiB (mapped), pcapngs cut inside their first and
// second blocks, a dangling link and a missing file.
func sweepInputs(t *testing.T, c *badCorpus) map[string]string {
	in := map[string]string{}
	for _, n := range []string{"empty", "random.bin", "README.md.gz", "cut-1of3.pcapng", "directory", "symlink-loop"} {
		in[n] = c.files[n]
	}
	put := func(name string, b []byte) {
		p := filepath.Join(c.dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		in[name] = p
	}
	rnd := rand.New(rand.NewSource(7))
	big := make([]byte, 2<<20+300)
	rnd.Read(big)
	put("random-2m.bin", big)
	log, err := os.ReadFile(c.good["mmio"])
	if err != nil {
		t.Fatal(err)
	}
	logs := bytes.Repeat(log, 5)
	put("cut-big.log", logs[:len(logs)/2+17])
	pcapng, err := os.ReadFile(c.good["usb"])
	if err != nil {
		t.Fatal(err)
	}
	put("cut-100.pcapng", pcapng[:100])
	put("cut-20.pcapng", pcapng[:20])
	dangling := filepath.Join(c.dir, "dangling")
	os.Symlink("nowhere", dangling)
	in["dangling"] = dangling
	in["nonexistent"] = filepath.Join(c.dir, "nonexistent")
	in["-"] = "-"
	return in
}

// TestBadInputSweep runs every command that reads a file on every kind of
// bad input, stdin included: each ends with exit 1, 2 or 3 and a last
// stderr line "iotap: ..." naming the input, within a deadline (no
// hang), without a panic, and never exit 0 with nothing said; a decoding
// error of a cut pcapng gives its offset. The exceptions are sweepKnown.
func TestBadInputSweep(t *testing.T) {
	c := newBadCorpus(t)
	inputs := sweepInputs(t, c)
	outDir := t.TempDir()
	stdinData := filepath.Join(c.dir, "stdin.bin")
	os.WriteFile(stdinData, bytes.Repeat([]byte{0xa5, 0x17, 0, 3}, 4096), 0o644)
	seen := map[string]bool{}
	for _, cmd := range sweepCommands {
		name := cmd[0]
		if cmd[0] == "usb" || cmd[0] == "mmio" || cmd[0] == "pt" || cmd[0] == "events" {
			name += " " + cmd[1]
		}
		for in, path := range inputs {
			out := filepath.Join(outDir, "out")
			os.RemoveAll(out)
			args := expand(cmd, path, out, c.good["mmio"])
			for i, a := range args {
				args[i] = strings.Replace(a, "GOODLOG", c.good["mmio"], 1)
			}
			saved := os.Stdin
			if in == "-" {
				f, err := os.Open(stdinData)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				os.Stdin = f
			}
			type result struct {
				stderr string
				code   int
				panic  any
			}
			done := make(chan result, 1)
			go func() {
				var r result
				defer func() {
					if p := recover(); p != nil {
						r.panic = p
					}
					done <- r
				}()
				var stdout, stderr bytes.Buffer
				err := run(context.Background(), args, &stdout, &stderr)
				r.code = exitCode(err, &stderr)
				r.stderr = stderr.String()
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(60 * time.Second):
				t.Fatalf("%s on %s: still running after 60 s", name, in)
			}
			os.Stdin = saved
			key := name + "|" + in
			why, known := sweepKnown[key]
			if !known {
				why, known = sweepKnown[name+"|*"]
				if known {
					seen[name+"|*"] = true
				}
			} else {
				seen[key] = true
			}
			if r.panic != nil || strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") {
				t.Errorf("%s on %s: panic %v\n%s", name, in, r.panic, r.stderr)
				continue
			}
			msg := lastLine(r.stderr)
			var bad []string
			if r.code != 1 && r.code != 2 && r.code != 3 {
				bad = append(bad, fmt.Sprintf("exit %d", r.code))
			}
			if !strings.HasPrefix(msg, "iotap: ") {
				bad = append(bad, "no iotap: message")
			}
			if !strings.Contains(msg, path) && !(path == "-" && strings.Contains(msg, "standard input")) {
				bad = append(bad, "the input not named")
			}
			if cmd[0] == "usb" && strings.HasPrefix(in, "cut-") && strings.HasSuffix(in, ".pcapng") && !strings.Contains(msg, "offset") {
				bad = append(bad, "no offset")
			}
			switch {
			case len(bad) > 0 && !known:
				t.Errorf("%s on %s: %s: exit %d, stderr:\n%s", name, in, strings.Join(bad, ", "), r.code, r.stderr)
			case len(bad) == 0 && known && !strings.HasSuffix(key, "|*") && sweepKnown[key] != "":
				t.Errorf("%s on %s follows the rules now (exit %d, %q): take %q (%s) off sweepKnown", name, in, r.code, msg, key, why)
			}
		}
	}
	for k := range sweepKnown {
		if !seen[k] {
			t.Errorf("sweepKnown %q matches no case", k)
		}
	}
}

// TestBadInputShrink: a regular file cut shorter while a command streams
// it with read(2) (a capture still being written, copied or rotated;
// mapfiletest.CutOnWrite truncates it at the command's first write of
// output, after its first reads) ends with the error of the mapped
// readers, "iotap: ...FILE: truncated while reading at offset N", exit
// 1, never a clean end of file with exit 0 and nothing said.
func TestBadInputShrink(t *testing.T) {
	dir := t.TempDir()
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	usbText := bytes.Repeat(read("../../testdata/usbmon/lab-0u.txt"), 600)     // 5.5 MB
	mlog := bytes.Repeat(read("../../testdata/mmiotrace/e1000-probe.log"), 12) // 5.9 MB
	var enc intelpt.Encoder
	for len(enc.Bytes()) < 6<<20 {
		enc.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
		enc.Encode(intelpt.Packet{Kind: intelpt.KindTSC, Payload: uint64(len(enc.Bytes()))})
		enc.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
		for range 200 {
			enc.Encode(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 3, Payload: 5})
		}
	}
	for _, tc := range []struct {
		cmd  []string
		data []byte
	}{
		{[]string{"usb", "read"}, usbText},
		{[]string{"mmio", "replay", "--dry-run"}, mlog},
		{[]string{"mmio", "read"}, mlog},
		{[]string{"pt", "dump"}, enc.Bytes()},
	} {
		name := strings.Join(tc.cmd, " ")
		in := filepath.Join(dir, "input")
		if err := os.WriteFile(in, tc.data, 0o600); err != nil {
			t.Fatal(err)
		}
		const cut = 3 << 20
		w := &mapfiletest.CutOnWrite{T: t, Path: in, Size: cut, Discard: true}
		var stderr bytes.Buffer
		err := run(context.Background(), append(append([]string{}, tc.cmd...), in), w, &stderr)
		code := exitCode(err, &stderr)
		msg := lastLine(stderr.String())
		if !w.Cut() {
			t.Fatalf("%s: wrote nothing: the input was not cut", name)
		}
		// The offset where the data ended: the cut, or past it when the
		// reader had read further before the cut.
		var off int64
		i := strings.Index(msg, in+": truncated while reading at offset ")
		if i >= 0 {
			fmt.Sscan(msg[i+len(in+": truncated while reading at offset "):], &off)
		}
		if code != 1 || !strings.HasPrefix(msg, "iotap: ") || i < 0 || off < cut || off >= int64(len(tc.data)) || strings.Count(msg, in) != 1 {
			t.Errorf("%s of a file cut to %d bytes while read: exit %d, %q; want exit 1, \"iotap: ...%s: truncated while reading at offset N\" (N >= %d), the file named once", name, cut, code, msg, in, cut)
		}
	}
}
