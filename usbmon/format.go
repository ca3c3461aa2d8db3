package usbmon

import "fmt"

// Format is a file or stream format of usbmon events.
type Format uint8

// Formats.
const (
	FormatUnknown Format = iota
	// Format1u is the kernel's '1u' text (usbmon/Nu), with bus numbers,
	// interval, start frame and ISO descriptors.
	Format1u
	// Format1t is the older '1t' text (usbmon/Nt): no bus number.
	Format1t
	// FormatPcap is a libpcap file with link type 189 or 220.
	FormatPcap
	// FormatPcapng is a pcapng file with link type 189 or 220 interfaces.
	FormatPcapng
	// FormatBinary is the kernel's binary API (/dev/usbmonN): events from
	// a live capture.
	FormatBinary
)

func (f Format) String() string {
	switch f {
	case Format1u:
		return "1u"
	case Format1t:
		return "1t"
	case FormatPcap:
		return "pcap"
	case FormatPcapng:
		return "pcapng"
	case FormatBinary:
		return "binary"
	}
	return "unknown"
}

// ParseFormat parses a format name as the CLI accepts it: 1u, 1t, pcap,
// pcapng.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "1u", "text", "u":
		return Format1u, nil
	case "1t", "t":
		return Format1t, nil
	case "pcap":
		return FormatPcap, nil
	case "pcapng":
		return FormatPcapng, nil
	}
	return FormatUnknown, fmt.Errorf("usbmon: unknown format %q (want 1u, 1t, pcap or pcapng)", s)
}

// Link types of pcap/pcapng files carrying usbmon headers.
const (
	// LinkTypeUSBLinux is DLT_USB_LINUX: the 48-byte header.
	LinkTypeUSBLinux = 189
	// LinkTypeUSBLinuxMmapped is DLT_USB_LINUX_MMAPPED: the 64-byte header
	// followed by ISO descriptors.
	LinkTypeUSBLinuxMmapped = 220
)
