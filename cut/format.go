package cut

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/iotap/iotap/detect"
)

// Format is an input format cut writes back.
type Format uint8

// The formats.
const (
	FormatUnknown Format = iota
	FormatMMIO           // mmiotrace log
	FormatUSBText        // usbmon text, '1u' or '1t'
	FormatPcap           // pcap (any link type)
	FormatPcapng         // pcapng (any link type)
	FormatEvents         // user_events NDJSON (iotap events record --json)
	FormatPT             // raw Intel PT (one CPU's or thread's packet stream)
	FormatPerfPT         // Intel PT in a perf.data file (CutPerfDataPT)
	numFormats
)

var formatNames = [numFormats]string{"unknown", "mmiotrace log", "usbmon text", "pcap", "pcapng", "user_events NDJSON", "raw Intel PT", "Intel PT perf.data"}

func (f Format) String() string {
	if f < numFormats {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// Sniff recognises the format of a (decompressed) input from its first
// bytes; complete says head is the whole input.
func Sniff(head []byte, complete bool) (Format, error) {
	if len(head) >= 4 {
		switch binary.LittleEndian.Uint32(head) {
		case 0x0a0d0d0a:
			return FormatPcapng, nil
		case 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1:
			return FormatPcap, nil
		}
	}
	res, err := detect.Head(head, complete)
	if err != nil {
		return FormatUnknown, fmt.Errorf("cut: %w", err)
	}
	switch {
	case res.Kind == detect.MMIO:
		return FormatMMIO, nil
	case res.Kind == detect.Events:
		return FormatEvents, nil
	case res.Format == "usbmon 1u" || res.Format == "usbmon 1t":
		return FormatUSBText, nil
	case res.Kind == detect.PT && res.Format == "raw Intel PT":
		return FormatPT, nil
	case res.Kind == detect.PT:
		return FormatUnknown, fmt.Errorf("cut: %s: cut writes raw Intel PT streams ('iotap pt capture' directories' cpuN.pt), not perf.data files", res)
	}
	return FormatUnknown, fmt.Errorf("cut: %s: cut writes pcap, pcapng, usbmon text, mmiotrace logs, user_events NDJSON and raw Intel PT", res)
}

func newScanner(f Format) scanner {
	switch f {
	case FormatMMIO:
		return &mmioScanner{base: base{f: f}}
	case FormatUSBText:
		return &usbTextScanner{base: base{f: f}}
	case FormatPcap:
		return &pcapScanner{base: base{f: f}}
	case FormatPcapng:
		return &pcapngScanner{base: base{f: f}}
	case FormatEvents:
		return &eventsScanner{base: base{f: f}}
	}
	return nil
}

// hasWall says whether the format's clock is the Unix epoch.
func (f Format) hasWall() bool { return f == FormatPcap || f == FormatPcapng }

func trimEOL(l []byte) []byte {
	l = bytes.TrimSuffix(l, []byte("\n"))
	return bytes.TrimSuffix(l, []byte("\r"))
}
