package usb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/iotap/iotap/internal/mapfile"
	"github.com/iotap/iotap/usbmon"
)

// TestPipelineNamesReadError: a bad line of a usbmon text capture is an
// error naming the input (the name given to Open) and the line, whichever
// job reads it (usb read's text and --json, stats, pair, Each), as usb
// convert names it; before, the error was the reader's alone ("usbmon: 1u
// line 4: ..."). A truncation is not named: it is a loss (Loss), named
// where it is reported; a file cut shorter while read, which names
// itself, is named once.
func TestPipelineNamesReadError(t *testing.T) {
	raw, err := os.ReadFile("../testdata/usbmon/lab-0u.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	bad := strings.Join(lines[:3], "") + "garbage line here\n" + strings.Join(lines[3:6], "")
	jobs := map[string]func(pl *Pipeline) error{
		"WriteText":   func(pl *Pipeline) error { return pl.WriteText(context.Background(), io.Discard, false) },
		"WriteNDJSON": func(pl *Pipeline) error { return pl.WriteNDJSON(context.Background(), io.Discard, "cap.txt") },
		"Stats": func(pl *Pipeline) error {
			_, err := pl.Stats(context.Background())
			return err
		},
		"WriteTransfers": func(pl *Pipeline) error {
			return pl.WriteTransfers(context.Background(), io.Discard, TransferFormat{})
		},
		"Each": func(pl *Pipeline) error {
			return pl.Each(context.Background(), func(uint64, *usbmon.Event, Pair, bool) error { return nil })
		},
	}
	for name, job := range jobs {
		pl, err := OpenPipeline(strings.NewReader(bad), "cap.txt", int64(len(bad)), false, ReadOptions{Selection: AnySelection()})
		if err != nil {
			t.Fatal(err)
		}
		err = job(pl)
		pl.Close()
		if err == nil || !strings.HasPrefix(err.Error(), "cap.txt: usbmon: 1u line 4: ") {
			t.Errorf("%s: error %v, want it to start with %q", name, err, "cap.txt: usbmon: 1u line 4: ")
		}
		if _, lossErr := pl.Loss(err); lossErr == nil || lossErr.Error() != err.Error() {
			t.Errorf("%s: Loss: %v, want the error", name, lossErr)
		}
	}
	// A file cut shorter while read names itself: named once, whether
	// the cut is met by Open (in the head it reads) or later.
	for _, keep := range []int{len(lines[0]), len(raw)} {
		fault := io.MultiReader(strings.NewReader(string(raw[:keep])), iotest.ErrReader(&mapfile.FaultError{File: "cap.txt", Offset: int64(keep)}))
		pl, err := OpenPipeline(fault, "cap.txt", -1, false, ReadOptions{Selection: AnySelection()})
		if err == nil {
			err = pl.WriteText(context.Background(), io.Discard, false)
			pl.Close()
		}
		if want := fmt.Sprintf("cap.txt: truncated while reading at offset %d", keep); err == nil || err.Error() != want {
			t.Errorf("file cut while read after %d bytes: error %v, want %q", keep, err, want)
		}
	}
	// A cut pcapng is a loss, named by whoever reports it.
	capture, err := os.ReadFile(labPcapng)
	if err != nil {
		t.Fatal(err)
	}
	cut := capture[:len(capture)/2]
	pl, err := OpenPipeline(bytes.NewReader(cut), "cut.pcapng", int64(len(cut)), false, ReadOptions{Selection: AnySelection()})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	readErr := pl.WriteText(context.Background(), io.Discard, false)
	lost, err := pl.Loss(readErr)
	if !errors.Is(readErr, usbmon.ErrTruncated) || err != nil || len(lost) != 1 || !strings.HasPrefix(lost[0], "usbmon: pcapng offset ") {
		t.Errorf("cut pcapng: read error %v, loss %q, %v; want the truncation as the loss, not named", readErr, lost, err)
	}
}
