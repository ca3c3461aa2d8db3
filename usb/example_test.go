package usb_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/iotap/iotap/rotate"
	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

func ExampleParseSetup() {
	// "s a3 00 0000 0003 0004" in a usbmon text line: a hub port status read.
	s, err := usb.ParseSetup([]byte{0xa3, 0x00, 0x00, 0x00, 0x03, 0x00, 0x04, 0x00})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Describe(0))
	fmt.Println(s.Kind(), s.Recipient(), s.In())
	// Output:
	// GET_STATUS port=3 len=4
	// class other true
}

func ExampleParseConfiguration() {
	b, _ := hex.DecodeString("090220000101008032" + "090400000208065000" + "07058102000200" + "07050202000200")
	c, err := usb.ParseConfiguration(b)
	if err != nil {
		panic(err)
	}
	fmt.Print(c.Tree())
	// Output:
	// CONFIGURATION 1 total=32 interfaces=1 maxpower=100mA
	//   INTERFACE 0 alt=0 class=mass-storage/6/80 endpoints=2 string=0
	//     ENDPOINT 0x81 in bulk maxpacket=512 interval=0
	//     ENDPOINT 0x02 out bulk maxpacket=512 interval=0
}

func ExampleParseReportDescriptor() {
	// A three-button mouse.
	b, _ := hex.DecodeString("05010902a1010901a100050919012903150025019503750181029501750581030501093009311581257f750895028106c0c0")
	rd, err := usb.ParseReportDescriptor(b)
	if err != nil {
		panic(err)
	}
	fmt.Println(rd.Summary())
	fmt.Println(rd.Items[1])
	// Output:
	// REPORT items=26 apps=Mouse input=3B
	// Usage (Mouse)
}

func ExampleParseCBW() {
	// From the kernel's usbmon documentation: a READ_10 to LUN 1.
	b, _ := hex.DecodeString("55534243ad0000000080000080010a28200000002000004000000000000000")
	c, err := usb.ParseCBW(b)
	if err != nil {
		panic(err)
	}
	fmt.Println(c)
	// Output:
	// CBW tag=0xad lun=1 in 32768: READ_10 lba=32 blocks=64
}

func ExamplePairer() {
	p := usb.NewPairer()
	events := []usbmon.Event{
		{ID: 0xd5ea89a0, Type: usbmon.Submission, Transfer: usbmon.Bulk, Bus: 1, Device: 5, Endpoint: 2, TextStamp: 4128379752, Fields: usbmon.HasTextStamp},
		{ID: 0xd5ea89a0, Type: usbmon.Callback, Transfer: usbmon.Bulk, Bus: 1, Device: 5, Endpoint: 2, Length: 31, TextStamp: 4128379808, Fields: usbmon.HasTextStamp},
	}
	for i := range events {
		if pr, ok := p.Add(&events[i]); ok {
			fmt.Printf("urb %#x: %d bytes in %v\n", pr.ID, pr.Length, pr.LatencyDuration())
		}
	}
	fmt.Printf("%+v\n", p.Counts())
	// Output:
	// urb 0xd5ea89a0: 31 bytes in 56µs
	// {Pairs:1 Unmatched:0 Superseded:0 InFlight:0 Orphans:0 Overflow:0 SubmitErrors:0 Synthesized:0}
}

func ExampleFilter() {
	ids := usb.NewIdentities()
	ids.Set(usb.DeviceInfo{Bus: 1, Device: 2, HasID: true, Vendor: 0x0627, Product: 0x0001})
	f := usb.All(usb.TransferIs(usbmon.Interrupt), usb.DirectionIs(true), usb.DeviceIDIs(ids, 0x0627, 0x0001))
	kbd := usbmon.Event{Transfer: usbmon.Interrupt, In: true, Bus: 1, Device: 2, Endpoint: 1}
	disk := usbmon.Event{Transfer: usbmon.Bulk, In: true, Bus: 1, Device: 3, Endpoint: 1}
	fmt.Println(f.Match(&kbd), f.Match(&disk))
	// Output:
	// true false
}

func ExampleDecoder() {
	// The examples of the kernel's usbmon documentation, as text.
	text := `d5ea89a0 3575914555 S Ci:1:001:0 s a3 00 0000 0003 0004 4 <
d5ea89a0 3575914560 C Ci:1:001:0 0 4 = 01050000
dd65f0e8 4128379752 S Bo:1:005:2 -115 31 = 55534243 ad000000 00800000 80010a28 20000000 20000040 00000000 000000
dd65f0e8 4128379808 C Bo:1:005:2 0 31 >
`
	r, _, err := usbmon.NewReader(strings.NewReader(text))
	if err != nil {
		panic(err)
	}
	ids := usb.NewIdentities()
	dec := usb.NewDecoder(ids)
	st := usb.NewStats()
	var ev usbmon.Event
	for r.ReadInto(&ev) == nil {
		p, ok := st.Add(&ev)
		if ok {
			ids.Observe(p, &ev)
		}
		d := dec.Decode(&ev, p, ok)
		fmt.Printf("%c", ev.Type)
		if d.Summary != "" {
			fmt.Printf(" %s", d.Summary)
		}
		if ok {
			fmt.Printf(" (%v)", p.LatencyDuration())
		}
		fmt.Println()
	}
	// Output:
	// S GET_STATUS port=3 len=4
	// C status=connection|power|high-speed change=0 (5µs)
	// S CBW tag=0xad lun=1 in 32768: READ_10 lba=32 blocks=64
	// C (56µs)
}

// The filter of 'iotap usb capture --dev 2' over a few events (a
// --vidpid filter reads sysfs: usb.DefaultSysfsRoot on a live system).
func ExampleLiveFilter() {
	f, err := usb.LiveFilter(usb.DefaultSysfsRoot, "", 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, dev := range []uint8{1, 2, 3} {
		fmt.Println(dev, f.Match(&usbmon.Event{Bus: 1, Device: dev}))
	}
	// Output:
	// 1 false
	// 2 true
	// 3 false
}

// The flags of 'iotap usb capture' as a program gives them: FileOptions
// checks them and returns what usbmon.CaptureToFile needs (here without
// opening anything: a bad value is refused first).
func ExampleCaptureArgs() {
	a := usb.CaptureArgs{Path: "usb.pcapng", Method: "mmap", Format: "pcapng", RingSize: "600K", Queue: "0", Nice: "0", NoInject: true,
		Duration: time.Minute, Rotate: rotate.Args{FileSize: "100M", Ring: 10}}
	o, err := a.FileOptions(usb.DefaultSysfsRoot, nil)
	fmt.Println(o.Capture.Method, o.Capture.RingSize, o.Capture.Queue, o.Duration, o.Rotate.Size, o.Rotate.Files, err)
	a.RingSize = "2M"
	_, err = a.FileOptions(usb.DefaultSysfsRoot, nil)
	fmt.Println(errors.Is(err, usb.ErrSelection), err)
	// Output:
	// mmap 614400 0 1m0s 104857600 10 <nil>
	// true --ring-size 2097152: the kernel accepts 8192 (8K) to 1228800 (1200K) bytes
}

// 'iotap usb convert --format pcapng -Y EXPR IN -o OUT' behind its flags:
// the options of usbmon.Convert, checked.
func ExampleConvertArgs() {
	o, err := usb.ConvertArgs{Format: "pcapng", LinkType: usbmon.LinkTypeUSBLinuxMmapped, Path: "out.pcapng", Filter: "usb.ep == 0x81"}.Options()
	fmt.Println(o.Format == usbmon.FormatPcapng, o.Keep != nil, err)
	_, err = usb.ConvertArgs{Format: "pcap", LinkType: 0, Path: "out.pcap"}.Options()
	fmt.Println(err)
	// Output:
	// true true <nil>
	// --link-type 0: want 189 or 220
}
