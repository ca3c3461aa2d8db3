package usb

import (
	"errors"
	"fmt"

	"github.com/iotap/iotap/usbmon"
)

// ConvertArgs are the options of 'iotap usb convert' in the form its
// flags give them (the field comments name the flags); Options checks
// them into usbmon.Convert's options, and its errors name the flags.
type ConvertArgs struct {
	Format    string // --format: 1u, 1t, pcap or pcapng (usbmon.ParseFormat); required
	LinkType  int    // --link-type: of a pcap or pcapng output, 189 or 220 (usbmon.LinkTypeUSBLinux, LinkTypeUSBLinuxMmapped)
	Path      string // -o: the output file, "-" for standard output; required
	Filter    string // -Y: the events to write, a display-filter expression (ParseLearningFilter; "": all)
	KeepGoing bool   // --keep-going: skip text lines that do not parse (counted)
}

// Options checks a, in the order of the flags' messages: the format, the
// link type, the output, the filter. Its OnSkip is left to the caller
// (usbmon.LogSkipped).
func (a ConvertArgs) Options() (usbmon.ConvertOptions, error) {
	o := usbmon.ConvertOptions{LinkType: a.LinkType, KeepGoing: a.KeepGoing}
	if a.Format == "" {
		return o, errors.New("--format is required (1u, 1t, pcap or pcapng)")
	}
	var err error
	if o.Format, err = usbmon.ParseFormat(a.Format); err != nil {
		return o, err
	}
	if a.LinkType != usbmon.LinkTypeUSBLinux && a.LinkType != usbmon.LinkTypeUSBLinuxMmapped {
		return o, fmt.Errorf("--link-type %d: want 189 or 220", a.LinkType)
	}
	if a.Path == "" {
		return o, errors.New("-o OUT is required (- for stdout)")
	}
	if o.Keep, err = ParseLearningFilter(a.Filter); err != nil {
		return o, fmt.Errorf("-Y: %v", err)
	}
	return o, nil
}
