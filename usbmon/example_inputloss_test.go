package usbmon_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/iotap/iotap/usbmon"
)

// What reading a text capture lost, in the words iotap's commands print:
// with KeepGoing, a line that does not parse is skipped and counted.
func ExampleReaderLoss() {
	text := `d5ea89a0 3575914555 S Ci:1:001:0 s a3 00 0000 0003 0004 4 <
not a usbmon line
d5ea89a0 3575914560 C Ci:1:001:0 0 4 = 01050000
`
	r, _, err := usbmon.NewReaderOptions(strings.NewReader(text), usbmon.ReaderOptions{KeepGoing: true})
	if err != nil {
		panic(err)
	}
	var ev usbmon.Event
	n := 0
	for err = r.ReadInto(&ev); err == nil; err = r.ReadInto(&ev) {
		n++
	}
	if err == io.EOF {
		err = nil
	}
	lost, err := usbmon.ReaderLoss(r, err)
	fmt.Println(n, "events;", lost, err)
	lost, _ = usbmon.InputLoss(nil, 0, 3) // a pcapng file whose statistics count 3 drops
	fmt.Println(lost)
	// Output:
	// 2 events; [1 unreadable lines skipped] <nil>
	// [the capture records 3 events dropped by the kernel]
}

// 'iotap usb convert --keep-going' says the first lines it skips on
// stderr (SkipLogLines of them) and counts them all.
func ExampleLogSkipped() {
	text := `d5ea89a0 3575914555 S Ci:1:001:0 s a3 00 0000 0003 0004 4 <
not a usbmon line
d5ea89a0 3575914560 C Ci:1:001:0 0 4 = 01050000
`
	res, err := usbmon.Convert(context.Background(), strings.NewReader(text), io.Discard, usbmon.ConvertOptions{
		Format: usbmon.Format1u, KeepGoing: true, OnSkip: usbmon.LogSkipped(os.Stdout, "skipped: ")})
	fmt.Println(res.Events, "events,", res.Skipped, "skipped,", err)
	// Output:
	// skipped: usbmon: 1u line 2: bad URB tag
	// 2 events, 1 skipped, <nil>
}
