package usb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

const labPcapng = "../testdata/usbmon/lab-capture.pcapng"

// openLab opens the lab capture with opt.
func openLab(t *testing.T, path string, opt ReadOptions) *Pipeline {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fi, _ := f.Stat()
	pl, err := OpenPipeline(f, path, fi.Size(), false, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pl.Close)
	return pl
}

// tsharkFrames lists the frame numbers of path that the display filter
// selects (all with "").
func tsharkFrames(t *testing.T, path, filter string) []string {
	t.Helper()
	args := []string{"-r", path, "-T", "fields", "-e", "frame.number"}
	if filter != "" {
		args = append(args, "-Y", filter)
	}
	out, err := exec.Command(needTshark(t), args...).Output()
	if err != nil {
		t.Fatalf("tshark %s: %v", filter, err)
	}
	return strings.Fields(string(out))
}

// The events the writers hand on are those tshark's equivalent display
// filter selects, with tshark's frame numbers, in the text and the NDJSON
// output, read ahead on a goroutine or not.
func TestOpenPipelineAgainstTshark(t *testing.T) {
	for _, c := range []struct {
		sel    func(*Selection)
		tshark string
	}{
		{func(*Selection) {}, ""},
		{func(s *Selection) { s.Type = "ctrl" }, "usb.transfer_type == 2"},
		{func(s *Selection) { s.Type, s.Dir = "intr", "in" }, "usb.transfer_type == 1 && usb.endpoint_address.direction == 1"},
		{func(s *Selection) { s.Expr = "usb.urb_type == 'C' && usb.data_len > 0" }, "usb.urb_type == 'C' && usb.data_len > 0"},
	} {
		want := tsharkFrames(t, labPcapng, c.tshark)
		if len(want) == 0 {
			t.Fatalf("%q: tshark selects nothing", c.tshark)
		}
		for _, workers := range []int{1, 2} {
			opt := ReadOptions{Selection: AnySelection(), Workers: workers}
			c.sel(&opt.Selection)
			var text, js bytes.Buffer
			if err := openLab(t, labPcapng, opt).WriteText(context.Background(), &text, false); err != nil {
				t.Fatal(err)
			}
			if err := openLab(t, labPcapng, opt).WriteNDJSON(context.Background(), &js, "lab.pcapng"); err != nil {
				t.Fatal(err)
			}
			var textSeq, jsonSeq []string
			for _, l := range strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n") {
				textSeq = append(textSeq, strings.Fields(l)[0])
			}
			lines := strings.Split(strings.TrimSuffix(js.String(), "\n"), "\n")
			if !strings.HasPrefix(lines[0], `{"kind":"input","schema":1,"source":"usb","file":"lab.pcapng","format":"usbmon pcapng"`) {
				t.Errorf("first line %s", lines[0])
			}
			for _, l := range lines[1:] {
				var r struct{ Seq int }
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatalf("%s: %v", l, err)
				}
				jsonSeq = append(jsonSeq, strconv.Itoa(r.Seq))
			}
			if strings.Join(textSeq, " ") != strings.Join(want, " ") || strings.Join(jsonSeq, " ") != strings.Join(want, " ") {
				t.Errorf("%q workers %d: text %d events, json %d, tshark %d", c.tshark, workers, len(textSeq), len(jsonSeq), len(want))
			}
		}
	}
}

// WriteTransfers pairs as tshark does (usb.request_in), and its summary
// record and Summary count the pairs written.
func TestWriteTransfersAgainstTshark(t *testing.T) {
	out, err := exec.Command(needTshark(t), "-r", labPcapng, "-Y", "usb.request_in", "-T", "fields", "-e", "usb.request_in", "-e", "frame.number").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(out)), "\n")
	pl := openLab(t, labPcapng, ReadOptions{Selection: AnySelection()})
	var b bytes.Buffer
	if err := pl.WriteTransfers(context.Background(), &b, TransferFormat{JSON: true, File: "x"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	var got []string
	var sum struct {
		Kind  string
		Pairs int
	}
	for _, l := range lines[1:] {
		var r struct {
			Kind        string
			SubmitSeq   int `json:"submit_seq"`
			CompleteSeq int `json:"complete_seq"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Kind == "usb_pair" {
			got = append(got, strconv.Itoa(r.SubmitSeq)+"\t"+strconv.Itoa(r.CompleteSeq))
		}
	}
	json.Unmarshal([]byte(lines[len(lines)-1]), &sum)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%d pairs, tshark %d:\n%s\ntshark:\n%s", len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	c := pl.Pairer.Counts()
	if sum.Kind != "usb_pair_summary" || sum.Pairs != len(want) || int(c.Pairs) != len(want) ||
		!strings.HasPrefix(c.Summary(), strconv.Itoa(len(want))+" transfers paired; ") {
		t.Errorf("summary %+v, counts %+v: %s", sum, c, c.Summary())
	}
}

// writeCounter counts the Write calls.
type writeCounter struct{ n int }

func (w *writeCounter) Write(p []byte) (int, error) { w.n++; return len(p), nil }

// A live pipeline (a capture piped in) writes each event through at once.
func TestPipelineLive(t *testing.T) {
	n := len(tsharkFrames(t, labPcapng, ""))
	f, _ := os.Open(labPcapng)
	defer f.Close()
	pl, err := OpenPipeline(f, "-", -1, true, ReadOptions{Selection: AnySelection(), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	var w writeCounter
	if err := pl.WriteText(context.Background(), &w, false); err != nil {
		t.Fatal(err)
	}
	if w.n != n || pl.prefetch != nil {
		t.Errorf("%d writes for %d events (prefetch %v)", w.n, n, pl.prefetch != nil)
	}
}

// The errors of a selection match ErrSelection and name the flag; those
// of the input do not.
func TestPrepareErrors(t *testing.T) {
	sel := func(f func(*Selection)) ReadOptions {
		o := ReadOptions{Selection: AnySelection()}
		f(&o.Selection)
		return o
	}
	for _, c := range []struct {
		opt  ReadOptions
		want string
	}{
		{sel(func(s *Selection) { s.Endpoint = 16 }), "--ep 16 out of range 0..15"},
		{sel(func(s *Selection) { s.Dir = "up" }), `--dir "up": want in or out`},
		{sel(func(s *Selection) { s.Expr = "usb.nosuch == 1" }), `-Y: filter "usb.nosuch == 1": column 1: unknown field "usb.nosuch"`},
	} {
		_, err := Prepare(c.opt)
		if !errors.Is(err, ErrSelection) || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.opt.Selection, err, c.want)
		}
	}
	if _, err := Prepare(ReadOptions{Selection: AnySelection(), Sysfs: t.TempDir() + "/none"}); err == nil || errors.Is(err, ErrSelection) {
		t.Errorf("missing sysfs: %v", err)
	}
	// A text capture has no wall clock.
	f, _ := os.Open("../testdata/usbmon/lab-0u.txt")
	defer f.Close()
	_, err := OpenPipeline(f, "0u", -1, false, sel(func(s *Selection) { s.From = "2026-01-01T00:00:00Z" }))
	if !errors.Is(err, ErrSelection) || !strings.HasPrefix(err.Error(), "0u is a usbmon text capture") {
		t.Errorf("wall clock on text: %v", err)
	}
	// Not a capture: the reader's error, with the name.
	_, err = OpenPipeline(strings.NewReader("hello\n"), "x", -1, false, sel(func(*Selection) {}))
	if err == nil || errors.Is(err, ErrSelection) || !strings.HasPrefix(err.Error(), "x: ") {
		t.Errorf("not a capture: %v", err)
	}
	// A window that holds nothing is refused before the input is read.
	if _, err := Prepare(sel(func(s *Selection) { s.From, s.To = "@1", "@0.5" })); !errors.Is(err, ErrSelection) || !strings.Contains(err.Error(), "holds nothing") {
		t.Errorf("empty window: %v", err)
	}
	// A window that cannot be resolved on the capture's first event is
	// reported by Loss (here a wall-clock time on a text capture, which
	// Open refuses: the pipeline is put together by hand).
	p, err := Prepare(sel(func(s *Selection) { s.From = "2026-01-01T00:00:00Z" }))
	if err != nil {
		t.Fatal(err)
	}
	f.Seek(0, 0)
	r, _, err := usbmon.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	pl := NewPipeline(r, p.filter, p.ids)
	pl.window = p.window
	readErr := pl.WriteText(context.Background(), &writeCounter{}, false)
	if _, err := pl.Loss(readErr); !errors.Is(err, ErrSelection) || !strings.Contains(err.Error(), "wall") {
		t.Errorf("wall clock on a text capture: %v", err)
	}
}
