// Package usbmon reads, writes and captures Linux usbmon events.
//
// One type, [Event], holds everything the kernel's two usbmon APIs carry:
// the text API ('1t' and '1u' lines from /sys/kernel/debug/usb/usbmon/Nu)
// and the binary API (the 48- or 64-byte usbmon_packet header of
// /dev/usbmonN, which is also what pcap link types 189 and 220 carry).
//
// Reading is streaming and does not allocate per event: [NewReader] detects
// the format from the content (text 1u/1t, pcap, pcapng, either byte order)
// and returns a [Reader] whose ReadInto fills a caller-owned Event. The
// slices of an Event filled by ReadInto (Data, ISO) point into the reader's
// buffers and stay valid only until the next call; use [Event.Clone] or
// Read to keep an event.
//
// Writers ([NewTextWriter], [NewPcapWriter], [NewPcapngWriter]) produce the
// same formats. Writing a text event read from the kernel gives back the
// kernel's line byte for byte. What a target format cannot hold (text keeps
// at most 32 data bytes and no wall clock; link type 189 has no interval,
// start frame, ISO descriptors, ...) is counted in [Loss].
//
// Live capture (Linux only) is in capture_linux.go: [Capture] opens
// /dev/usbmonN with mmap + MON_IOCX_MFETCH (default), read/MON_IOCX_GETX, or
// the text file, and is itself a Reader. With CaptureOptions.Queue, a
// goroutine on a thread of its own (at a raised priority when allowed:
// CaptureOptions.Nice) copies the records out of the mmap ring into a
// bounded queue and releases the ring space at once, so encoding and
// writing never hold the kernel ring; CaptureStats says how close the
// capture came to losing events (RingPeak, MaxStall, QueuePeak) and how
// many the kernel dropped (MON_IOCG_STATS, never hidden).
package usbmon
