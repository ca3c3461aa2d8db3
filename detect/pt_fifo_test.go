//go:build linux

package detect

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/internal/mapfile/mapfiletest"
)

// TestOpenPTFIFO: a named pipe is opened once, whatever it carries: a
// perf.data is copied from the reader whose head was checked (as
// standard input is: the same streams as the file opened by name), raw PT
// is streamed, anything else is refused from its head. Opening the pipe a
// second time would block: every case has a deadline.
func TestOpenPTFIFO(t *testing.T) {
	const lib = "../intelpt/testdata/libipt/"
	perf, err := os.ReadFile(lib + "two-cpus.perf.data")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(lib + "dump-all-packets.pt")
	if err != nil {
		t.Fatal(err)
	}
	byName, err := OpenPT(lib+"two-cpus.perf.data", false)
	if err != nil {
		t.Fatal(err)
	}
	defer byName.Close()
	for _, tc := range []struct {
		name   string
		data   []byte
		stream bool
	}{
		{"perf.data", perf, true},
		{"perf.data", perf, false},
		{"raw", raw, true},
		{"raw", raw, false},
		{"text", bytes.Repeat([]byte("not a trace\n"), 50), true},
	} {
		fifo := mapfiletest.FIFO(t)
		// Written for the first reader: a second open by the reader
		// then finds no writer and blocks for ever.
		mapfiletest.FeedFIFO(fifo, tc.data, 20*time.Second)
		type result struct {
			in  *PTInput
			got [][]byte
			err error
		}
		done := make(chan result, 1)
		go func() {
			var r result
			r.in, r.err = OpenPT(fifo, tc.stream)
			if r.err == nil && r.in.Stream != nil {
				b, _ := io.ReadAll(r.in.Stream)
				r.got = append(r.got, b)
			} else if r.err == nil {
				for _, s := range r.in.Loaded.Streams {
					b, _ := io.ReadAll(s.Reader())
					r.got = append(r.got, b)
				}
			}
			done <- r
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s (stream %v) on a FIFO: OpenPT still running after 20 s (the pipe opened twice?)", tc.name, tc.stream)
		}
		switch tc.name {
		case "perf.data":
			if r.err != nil || r.in.Stream != nil || r.in.Perf() == nil || len(r.got) != 2 {
				t.Fatalf("perf.data (stream %v): %+v, %v", tc.stream, r.in, r.err)
			}
			for i, s := range byName.Loaded.Streams {
				want, _ := io.ReadAll(s.Reader())
				if !bytes.Equal(r.got[i], want) {
					t.Errorf("perf.data (stream %v): stream %d differs from the file's", tc.stream, i)
				}
			}
			if r.in.Config() != byName.Config() {
				t.Errorf("perf.data (stream %v): config %+v, by name %+v", tc.stream, r.in.Config(), byName.Config())
			}
		case "raw":
			if r.err != nil || (r.in.Stream != nil) != tc.stream || len(r.got) != 1 || !bytes.Equal(r.got[0], raw) {
				t.Errorf("raw (stream %v): %+v, %v", tc.stream, r.in, r.err)
			}
		case "text":
			if r.err == nil || !strings.HasPrefix(r.err.Error(), "pt: "+fifo+": not a trace iotap reads: text") {
				t.Errorf("text: %v", r.err)
			}
		}
		if r.in != nil {
			r.in.Close()
		}
	}
}
