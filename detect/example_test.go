package detect_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/usb"
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

// Open an Intel PT input as 'iotap pt stats' does: a raw trace is decoded
// as it is read, anything else (here a perf.data) is split into streams.
func ExampleOpenPT() {
	for _, path := range []string{"../intelpt/testdata/libipt/ovf.pt", "../intelpt/testdata/libipt/two-cpus.perf.data"} {
		in, err := detect.OpenPT(path, true)
		if err != nil {
			fmt.Println(err)
			return
		}
		if in.Stream != nil {
			s, err := intelpt.ComputeStatsReader(in.Stream, intelpt.Config{})
			fmt.Println("raw:", s.Packets, "packets", err)
		} else {
			items := intelpt.InputStats(in.Loaded, path, in.Loaded.Config())
			fmt.Println("perf.data:", len(items), "streams, lost:", intelpt.StatsLoss(items, in.Perf()))
		}
		in.Close()
	}
	// Output:
	// raw: 3 packets <nil>
	// perf.data: 2 streams, lost: [cpu 3: 1 overflow(s)]
}

// OpenUSB is the input of 'iotap usb read': a USB capture (any of its
// formats, compressed too) read through a usb.Pipeline with its selection.
func ExampleOpenUSB() {
	opt := usb.ReadOptions{Selection: usb.AnySelection()}
	opt.Selection.Type = "ctrl"
	in, err := detect.OpenUSB("../testdata/usbmon/lab-0u.txt", opt, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer in.Close()
	var text strings.Builder
	err = in.WriteText(context.Background(), &text, false)
	fmt.Println(in.Reader.Format(), strings.Count(text.String(), "\n"), "control events", err)
	// Output:
	// 1u 68 control events <nil>
}

// 'iotap pt stats FILE' and 'pt dump FILE' on an opened input, whatever
// it is: a raw trace is read as it comes, a perf.data stream by stream.
func ExamplePTInput_Stats() {
	for _, path := range []string{"../intelpt/testdata/libipt/ovf.pt", "../intelpt/testdata/libipt/two-cpus.perf.data"} {
		in, err := detect.OpenPT(path, true)
		if err != nil {
			fmt.Println(err)
			return
		}
		items, err := in.Stats(context.Background(), in.Config(), 0, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(len(items), "stream(s), lost:", intelpt.StatsLoss(items, in.Perf()))
		in.Close()
	}
	// Output:
	// 1 stream(s), lost: [../intelpt/testdata/libipt/ovf.pt: 1 overflow(s)]
	// 2 stream(s), lost: [cpu 3: 1 overflow(s)]
}

func ExamplePTInput_Dump() {
	in, err := detect.OpenPT("../intelpt/testdata/libipt/ovf.pt", true)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer in.Close()
	sum, err := in.Dump(context.Background(), os.Stdout, in.Config(), intelpt.DumpOptions{}, intelpt.DumpInputOptions{CPU: -1}, nil)
	fmt.Println(sum.Loss(), err)
	// Output:
	// 0000000000000000  psb
	// 0000000000000010  psbend
	// 0000000000000012  ovf
	// [1 overflow(s) (see the listing)] <nil>
}
