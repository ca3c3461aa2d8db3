package cut_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/internal/timerange"
)

func Example() {
	log := strings.Join([]string{
		"VERSION 20070824",
		"MAP 1.000000 1 0xfebc0000 0xffffc90000a00000 0x20000 0x0 0",
		"R 4 1.500000 1 0xfebc0008 0x80080783 0x0 0",
		"MARK 2.000000 probe done",
		"W 4 2.250000 1 0xfebc00d0 0x9d 0x0 0",
		"R 4 3.000000 1 0xfebc0008 0x80080783 0x0 0",
	}, "\n") + "\n"
	in := cut.Input{Name: "probe.log", ReaderAt: strings.NewReader(log), Size: int64(len(log))}
	// Build the index (iotap index writes it next to the input).
	ix, err := cut.BuildIndex(context.Background(), in, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	in.Index = ix

	spec, _ := timerange.ParseSpec("mark:probe done", "+1s")
	var out bytes.Buffer
	res, err := cut.Cut(context.Background(), in, &out, cut.Options{Window: spec, Warn: func(s string) { fmt.Fprintln(os.Stderr, s) }})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(out.String())
	fmt.Println(res.Events, "events, indexed:", res.Indexed)
	// Output:
	// VERSION 20070824
	// MAP 1.000000 1 0xfebc0000 0xffffc90000a00000 0x20000 0x0 0
	// MARK 2.000000 probe done
	// W 4 2.250000 1 0xfebc00d0 0x9d 0x0 0
	// 2 events, indexed: true
}
