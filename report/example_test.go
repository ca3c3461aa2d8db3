package report_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/report"
	"github.com/iotap/iotap/timeline"
	"github.com/iotap/iotap/usb"
)

// Build summarises the traces of a directory; each trace keeps its
// source's summary.
func Example() {
	r, err := report.Build(context.Background(), []string{"../testdata/capture"}, report.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for _, t := range r.Traces {
		fmt.Printf("%s: %s (%s) aligned=%v %s\n", t.Name, t.Source, t.Format, t.Aligned, t.Status())
		if t.USB != nil {
			for _, e := range t.USB.Stats.Endpoints() {
				fmt.Printf("  ep %02x: %d bytes, p99 latency %s\n", e.Endpoint, e.Bytes, report.FmtMicros(e.Latency.Quantile(0.99)))
			}
		}
	}
	// Output:
	// ../testdata/capture/events.ndjson: events (user_events NDJSON) aligned=true ok
	// ../testdata/capture/mmio.log.zst: mmio (mmiotrace log) aligned=true ok
	// ../testdata/capture/usb.pcapng: usb (usbmon pcapng) aligned=true ok
	//   ep 81: 8218 bytes, p99 latency 7.315ms
	//   ep 02: 62 bytes, p99 latency 1.033ms
}

// WriteMMIOStats is 'iotap mmio stats': the e1000's registers named from
// the shipped database by the device's PCI id.
func ExampleWriteMMIOStats() {
	log := `PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000
MAP 12.222895 1 0xfebc0000 0xff47c24040380000 0x20000 0x0 0
R 4 12.225226 1 0xfebc0008 0x80080783 0x0 0
R 4 12.225230 1 0xfebc0008 0x80080783 0x0 0
W 4 12.228179 1 0xfebc00d8 0xffffffff 0x0 0
`
	st, err := mmiotrace.Analyze(strings.NewReader(log), mmiotrace.StatsOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := report.WriteMMIOStats(os.Stdout, st, report.MMIOStatsOptions{Top: 5}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// lines 5, R 2, W 1, MAP 1, PCIDEV 1
	// lost events 0, skipped lines 0
	//
	// maps:
	//   map 1    0xfebc0000+0x20000  reads 2  writes 1
	//
	// hot registers (2 of 2):
	//   0000:00:03.0/0+0x8       STATUS     w4  reads 2        writes 0        last 0x80080783
	//   0000:00:03.0/0+0xd8      IMC        w4  reads 0        writes 1        last 0xffffffff
	//
	// polling loops: 0
}

// The kind of each -o file, by its extension.
func ExampleOutputKind() {
	for _, p := range []string{"out/report.html", "all.pftrace", "r.ndjson", "notes.txt"} {
		fmt.Printf("%s: %q\n", p, report.OutputKind(p))
	}
	// Output:
	// out/report.html: "html"
	// all.pftrace: "perfetto"
	// r.ndjson: "json"
	// notes.txt: ""
}

// The kinds of 'iotap report -o report.html -o all.pftrace', and of a
// single file named by --format.
func ExampleOutputKinds() {
	fmt.Println(report.OutputKinds([]string{"report.html", "all.pftrace"}, ""))
	fmt.Println(report.OutputKinds([]string{"-"}, "json"))
	fmt.Println(report.OutputKinds([]string{"notes.txt"}, ""))
	// Output:
	// [html perfetto] <nil>
	// [json] <nil>
	// [] -o notes.txt: unknown kind of output: name it .html (HTML report), .pftrace or .perfetto-trace (Perfetto trace), .json (NDJSON), or give --format
}

// 'iotap report DIR -o out/report.html' with a timeline written beside
// it: the page links the trace relative to itself; the progress of
// Build in bytes read before each trace.
func ExampleReport_WriteOutput() {
	progress := report.ByteProgress(func(done int64, status string) { fmt.Println(done, status) })
	r, err := report.Build(context.Background(), []string{"../testdata/capture"}, report.Options{Progress: progress})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var page strings.Builder
	tl := &timeline.FileResult{Out: "timeline.pftrace"}
	if err := r.WriteOutput(&page, report.OutputHTML, "out/report.html", tl, report.HTMLOptions{}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(report.OutputTitle(report.OutputHTML), strings.Contains(page.String(), `href="../timeline.pftrace"`))
	// Output:
	// 0 trace 1: ../testdata/capture/events.ndjson
	// 372 trace 2: ../testdata/capture/mmio.log.zst
	// 45964 trace 3: ../testdata/capture/usb.pcapng
	// HTML report true
}

// WriteUSBStats is the output of 'iotap usb stats': here its last NDJSON
// record, the pairing summary of the lab capture.
func ExampleWriteUSBStats() {
	f, err := os.Open("../testdata/usbmon/lab-capture.0u")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	pl, err := usb.OpenPipeline(f, "lab-capture.0u", -1, false, usb.ReadOptions{Selection: usb.AnySelection()})
	if err != nil {
		log.Fatal(err)
	}
	defer pl.Close()
	st, err := pl.Stats(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	var b strings.Builder
	if err := report.WriteUSBStats(&b, st, pl, "lab-capture.0u", true); err != nil {
		log.Fatal(err)
	}
	recs := strings.Split(strings.TrimSpace(b.String()), "\n")
	fmt.Println(recs[len(recs)-1])
	// Output:
	// {"kind":"usb_summary","events":184,"untracked_events":0,"span_ns":18686347000,"pairing":{"pairs":89,"unmatched_submissions":4,"superseded_submissions":0,"in_flight":4,"orphan_completions":2,"overflow":0,"submit_errors":0,"synthesized":0}}
}
