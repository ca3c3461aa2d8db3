package cut_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/internal/timerange"
)

// TestCutFile: CutFile of [0.18 s, 0.19 s) of the lab's e1000 bind log
// writes the accesses whose stamps, read from the log's fields, are
// 0.18 s to 0.19 s after its first record; the meter sees the file's
// size; the loss a window keeps is the log's "Lost N events." count.
func TestCutFile(t *testing.T) {
	const bind = "../mmiotrace/testdata/e1000-bind.log"
	b, err := os.ReadFile(bind)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	first := -1.0
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		var ts string
		switch {
		case len(f) > 2 && (f[0] == "R" || f[0] == "W"):
			ts = f[2]
		case len(f) > 1 && (f[0] == "MAP" || f[0] == "UNMAP" || f[0] == "MARK"):
			ts = f[1]
		default:
			continue
		}
		s, err := strconv.ParseFloat(ts, 64)
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if first < 0 {
			first = s
		}
		if us := int64((s-first)*1e6 + 0.5); (f[0] == "R" || f[0] == "W") && us >= 180000 && us < 190000 {
			want = append(want, l)
		}
	}
	spec, err := timerange.ParseSpec("0.18s", "0.19s")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var metered int64
	res, err := cut.CutFile(context.Background(), bind, &out, false, func(r io.ReaderAt, size int64) io.ReaderAt { metered = size; return r }, cut.Options{Window: spec})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "R ") || strings.HasPrefix(l, "W ") {
			got = append(got, l)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(want) == 0 || res.Events != int64(len(want)) {
		t.Errorf("cut kept %d accesses (%d events), the log's fields select %d:\n%q\n%q", len(got), res.Events, len(want), got, want)
	}
	if metered != int64(len(b)) {
		t.Errorf("meter saw %d bytes, the file has %d", metered, len(b))
	}
	if res.LostInWindow() != nil {
		t.Errorf("loss %q in a window of no loss", res.LostInWindow())
	}

	const kinds = "../mmiotrace/testdata/kinds.log"
	k, err := os.ReadFile(kinds)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Lost (\d+) events\.`).FindSubmatch(k)
	spec, _ = timerange.ParseSpec("0", "")
	res, err = cut.CutFile(context.Background(), kinds, io.Discard, true, nil, cut.Options{Window: spec})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"the window records " + string(m[1]) + " lost events"}; fmt.Sprint(res.LostInWindow()) != fmt.Sprint(want) {
		t.Errorf("loss %q, want %q", res.LostInWindow(), want)
	}
	if _, err := cut.CutFile(context.Background(), "nosuchfile.log", io.Discard, true, nil, cut.Options{Window: spec}); err == nil {
		t.Error("a missing file is not an error")
	}
}

// TestOpenTraceStream: a trace of another kind is refused with detect's
// word for what it is, before any cut; a trace of the kind wanted streams
// its window, as CutFile writes it.
func TestOpenTraceStream(t *testing.T) {
	spec, _ := timerange.ParseSpec("0.18s", "0.19s")
	_, err := cut.OpenTraceStream(context.Background(), "../testdata/usbmon/lab-capture.pcapng", detect.MMIO, spec, nil)
	if err == nil || !strings.Contains(err.Error(), "pcapng") {
		t.Errorf("a pcapng opened as an mmiotrace log: %v", err)
	}
	const bind = "../mmiotrace/testdata/e1000-bind.log"
	s, err := cut.OpenTraceStream(context.Background(), bind, detect.MMIO, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if _, err := cut.CutFile(context.Background(), bind, &want, true, nil, cut.Options{Window: spec}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) || want.Len() == 0 {
		t.Errorf("stream of %d bytes, the cut has %d", len(got), want.Len())
	}
}
