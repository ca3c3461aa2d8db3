package usb_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

func openPipeline(t testing.TB, path string, f usb.Filter) *usb.Pipeline {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	r, _, err := usbmon.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	return usb.NewPipeline(r, f, nil)
}

// TestEachTransfer: the transfers and unmatched submissions handed on are
// those the pairer counts (pairs, superseded, in flight at the end); a
// filter selects among all of them; without unmatched only pairs come.
func TestEachTransfer(t *testing.T) {
	const path = "../testdata/usbmon/lab-capture.0u"
	count := func(pl *usb.Pipeline, unmatched bool) map[string]uint64 {
		n := map[string]uint64{}
		if err := pl.EachTransfer(context.Background(), unmatched, func(tr *usb.Transfer) error {
			if tr.Unmatched == "" && (tr.Event == nil || tr.Event.Type == usbmon.Submission) {
				t.Fatalf("a pair without its completion: %+v", tr)
			}
			n[tr.Unmatched]++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	pl := openPipeline(t, path, nil)
	n := count(pl, true)
	c := pl.Pairer.Counts()
	if n[""] != c.Pairs || n[usb.UnmatchedSuperseded] != c.Superseded || n[usb.UnmatchedInFlight] != c.InFlight || c.InFlight == 0 {
		t.Errorf("handed on %v, pairer counts %+v", n, c)
	}
	if n := count(openPipeline(t, path, nil), false); len(n) != 1 || n[""] != c.Pairs {
		t.Errorf("without unmatched: %v", n)
	}
	in := usb.TransferIs(usbmon.Interrupt)
	ni := count(openPipeline(t, path, in), true)
	if ni[""] == 0 || ni[""] >= n[""] || ni[usb.UnmatchedInFlight] == 0 || ni[usb.UnmatchedInFlight] > n[usb.UnmatchedInFlight] {
		t.Errorf("interrupt only: %v of %v", ni, n)
	}
}

// List the transfers of a capture with the submissions that never
// completed, as 'iotap usb pair --unmatched' does.
func ExamplePipeline_EachTransfer() {
	f, err := os.Open("../testdata/usbmon/lab-capture.0u")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	r, _, err := usbmon.NewReader(f)
	if err != nil {
		panic(err)
	}
	pl := usb.NewPipeline(r, nil, nil)
	var line []byte
	shown := 0
	err = pl.EachTransfer(context.Background(), true, func(t *usb.Transfer) error {
		if t.Unmatched != "" && shown < 2 {
			shown++
			line = usb.AppendUnmatchedText(line[:0], t.Unmatched, t.Key, t.Submission, pl.Identities)
			fmt.Print(string(line))
		}
		return nil
	})
	c := pl.Pairer.Counts()
	fmt.Println(c.Pairs, "pairs;", c.InFlight, "in flight;", c.Superseded, "superseded;", err)
	// Output:
	// 13->in_flight urb=0xff3447cbc288c9c0 Ii:002:1 len=?/8
	// 39->in_flight urb=0xff3447cbc1ad9a80 Ii:001:1 len=?/4
	// 89 pairs; 4 in flight; 0 superseded; <nil>
}
