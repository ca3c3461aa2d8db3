package usbmon_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/iotap/iotap/usbmon"
)

// Read kernel text (a copy of /sys/kernel/debug/usb/usbmon/0u) event by
// event, without allocating per event.
func ExampleNewReader() {
	text := `d5ea89a0 3575914555 S Ci:1:001:0 s a3 00 0000 0003 0004 4 <
d5ea89a0 3575914560 C Ci:1:001:0 0 4 = 01050000
`
	r, format, err := usbmon.NewReader(strings.NewReader(text))
	if err != nil {
		panic(err)
	}
	fmt.Println("format:", format)
	var ev usbmon.Event
	for {
		err := r.ReadInto(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		fmt.Printf("%c %s bus %d dev %d ep %d status %d len %d setup %v data [% x]\n",
			ev.Type, ev.Transfer, ev.Bus, ev.Device, ev.EndpointAddress(), ev.Status, ev.Length, ev.HasSetup(), ev.Data)
	}
	// Output:
	// format: 1u
	// S ctrl bus 1 dev 1 ep 128 status -115 len 4 setup true data []
	// C ctrl bus 1 dev 1 ep 128 status 0 len 4 setup false data [01 05 00 00]
}

// Convert events to pcapng (link type 220) and back to the kernel's text.
func ExampleNewPcapngWriter() {
	line := "ffff8880041b0000 13 C Ii:1:002:1 0:8 8 = 00000400 00000000\n"
	r, _, _ := usbmon.NewReader(strings.NewReader(line))
	ev, _ := r.Read()

	var file bytes.Buffer
	w, _ := usbmon.NewPcapngWriter(&file, usbmon.LinkTypeUSBLinuxMmapped)
	w.Write(ev)
	w.Flush()

	back, format, _ := usbmon.NewReader(&file)
	ev2, _ := back.Read()
	t := usbmon.NewTextWriter(os.Stdout, usbmon.Format1u)
	t.Write(ev2)
	t.Flush()
	fmt.Println(format)
	// Output:
	// ffff8880041b0000 13 C Ii:1:002:1 0:8 8 = 00000400 00000000
	// pcapng
}

// Decode a binary usbmon_packet header as /dev/usbmonN or a pcap file
// delivers it.
func ExampleDecodeHeader() {
	ev := usbmon.Event{ID: 1, Type: usbmon.Submission, Transfer: usbmon.Bulk, Endpoint: 2, Device: 5, Bus: 1,
		Status: -115, Length: 31, SetupFlag: usbmon.SetupNone, DataFlag: usbmon.DataPresent,
		Data: []byte("USBC"), Fields: usbmon.HasWallClock | usbmon.HasExtended}
	rec := usbmon.AppendPacket(nil, &ev, usbmon.HeaderLen64, binary.LittleEndian, nil)
	var got usbmon.Event
	if err := usbmon.DecodePacket(rec, usbmon.HeaderLen64, binary.LittleEndian, &got, nil); err != nil {
		panic(err)
	}
	fmt.Println(len(rec), got.Transfer, got.Device, got.Status, got.Length, got.CapLen, string(got.Data))
	// Output: 68 bulk 5 -115 31 4 USBC
}

// Convert a capture to pcap with the old 48-byte headers (link type 189),
// as 'iotap usb convert --format pcap --link-type 189' does: what the
// target cannot hold and what the input lost are counted.
func ExampleNewWriterLinkType() {
	f, err := os.Open("../testdata/usbmon/lab-capture.pcapng")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	r, from, err := usbmon.NewReader(f)
	if err != nil {
		panic(err)
	}
	w, err := usbmon.NewWriterLinkType(io.Discard, usbmon.FormatPcap, usbmon.LinkTypeUSBLinux)
	if err != nil {
		panic(err)
	}
	res, err := usbmon.Copy(context.Background(), w, r)
	if err != nil {
		panic(err)
	}
	lost, err := res.Loss()
	fmt.Println(res.Events, "events from", from, "lost:", len(lost), err)
	fmt.Println("pcap 189 cannot hold:", w.Loss())
	// Output:
	// 184 events from pcapng lost: 0 <nil>
	// pcap 189 cannot hold: 140 events lost interval/start frame/ndesc
}

// Convert a '1u' text capture to '1t' ('iotap usb convert --format 1t'),
// keeping the bulk IN endpoint's events; the summary says what '1t'
// cannot hold.
func ExampleConvert() {
	text := `ff1fd9fc028359c0 7038475 S Bo:1:002:2 -115 31 = 55534243 0d000000 00400000 80000a28 00000000 00000020 00000000 000000
ff1fd9fc028359c0 7042873 C Bo:1:002:2 0 31 >
ff1fd9fc0286b240 7043132 S Bi:1:002:1 -115 16384 <
ff1fd9fc0286b240 7044924 C Bi:1:002:1 0 16384 = 766d6c61 62206431 20736563 746f7220 30303030 30303030 0a766d6c 61622064
`
	var out bytes.Buffer
	res, err := usbmon.Convert(context.Background(), strings.NewReader(text), &out, usbmon.ConvertOptions{
		Format: usbmon.Format1t,
		Keep:   func(ev *usbmon.Event) bool { return ev.In },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(out.String())
	for _, l := range res.Summary() {
		fmt.Println(l)
	}
	// Output:
	// ff1fd9fc0286b240 7043132 S Bi:002:01 -115 16384 <
	// ff1fd9fc0286b240 7044924 C Bi:002:01 0 16384 = 766d6c61 62206431 20736563 746f7220 30303030 30303030 0a766d6c 61622064
	// converted 2 of 4 events (1u to 1t)
	// 1t cannot hold everything: 2 events lost bus numbers
}
