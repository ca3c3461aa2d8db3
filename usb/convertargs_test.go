package usb

import (
	"strings"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

// TestConvertArgs: usb convert's flags checked in their order (format
// required and known, link type 189 or 220, -o required, -Y compiled),
// errors naming the flag; the options carry format, link type, keep-going
// and the filter.
func TestConvertArgs(t *testing.T) {
	ok := ConvertArgs{Format: "pcap", LinkType: 189, Path: "out.pcap", Filter: "usb.ep == 0x81", KeepGoing: true}
	o, err := ok.Options()
	if err != nil || o.Format != usbmon.FormatPcap || o.LinkType != 189 || !o.KeepGoing || o.Keep == nil || o.OnSkip != nil {
		t.Fatalf("%+v: %+v, %v", ok, o, err)
	}
	ok.Filter = ""
	if o, err := ok.Options(); err != nil || o.Keep != nil {
		t.Errorf("no -Y: keep %v, %v", o.Keep != nil, err)
	}
	for _, c := range []struct {
		a    ConvertArgs
		want string
	}{
		{ConvertArgs{LinkType: 7, Path: ""}, "--format is required (1u, 1t, pcap or pcapng)"},
		{ConvertArgs{Format: "csv", LinkType: 7}, `usbmon: unknown format "csv"`},
		{ConvertArgs{Format: "1u", LinkType: 7}, "--link-type 7: want 189 or 220"},
		{ConvertArgs{Format: "1u", LinkType: 220, Filter: "(("}, "-o OUT is required (- for stdout)"},
		{ConvertArgs{Format: "1u", LinkType: 220, Path: "-", Filter: "usb.nosuchfield == 1"}, "-Y: "},
	} {
		if _, err := c.a.Options(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.a, err, c.want)
		}
	}
}
