package detect_test

import (
	"bytes"
	"compress/gzip"
	"fmt"

	"github.com/iotap/iotap/detect"
)

func Example() {
	log := []byte("VERSION 20070824\nPCIDEV 0000 80861237 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n")
	res, err := detect.Head(log, true)
	fmt.Println(res, res.Kind, err)

	// A gzipped README is not a log, whatever its name.
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write([]byte("# iotap\n\niotap is a Go toolkit\n"))
	w.Close()
	_, err = detect.Expect(z.Bytes(), true, detect.MMIO)
	fmt.Println(err)
	// Output:
	// mmiotrace log mmio <nil>
	// not an mmiotrace log: gzip-compressed text (line 3 is not an mmiotrace record: "iotap is a Go toolkit")
}

func ExampleOpenTrace() {
	in, err := detect.OpenTrace("../testdata/capture/mmio.log.zst", detect.MMIO)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer in.Close()
	// in reads the file from its first byte; a decoder decompresses it.
	fmt.Println(in.Format(), in.Size())

	_, err = detect.OpenTrace("../testdata/usbmon/lab-capture.pcapng", detect.MMIO)
	fmt.Println(err)
	// Output:
	// mmiotrace log (zstd-compressed) 45592
	// ../testdata/usbmon/lab-capture.pcapng: not an mmiotrace log: it is usbmon pcapng (use 'iotap usb ...')
}
