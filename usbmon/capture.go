package usbmon

import (
	"fmt"
	"time"
)

// Method is the kernel interface a live capture reads.
type Method uint8

// Capture methods.
const (
	// MethodMmap maps the binary ring of /dev/usbmonN and fetches events
	// in batches with MON_IOCX_MFETCH (zero copy; the default).
	MethodMmap Method = iota
	// MethodRead takes one event per MON_IOCX_GETX ioctl (64-byte header,
	// ISO descriptors and data copied out).
	MethodRead
	// MethodText reads the deprecated text API, usbmon/Nu in debugfs (at
	// most 32 data bytes per event, no wall clock).
	MethodText
)

func (m Method) String() string {
	switch m {
	case MethodMmap:
		return "mmap"
	case MethodRead:
		return "read"
	case MethodText:
		return "text"
	}
	return fmt.Sprintf("Method(%d)", uint8(m))
}

// ParseMethod parses mmap, read or text.
func ParseMethod(s string) (Method, error) {
	switch s {
	case "mmap", "":
		return MethodMmap, nil
	case "read", "getx":
		return MethodRead, nil
	case "text":
		return MethodText, nil
	}
	return 0, fmt.Errorf("usbmon: unknown capture method %q (want mmap, read or text)", s)
}

// The kernel's bounds of MON_IOCT_RING_SIZE (BUFF_MIN, BUFF_MAX with 4 KiB
// pages) and its default (BUFF_DFL).
const (
	RingSizeMin     = 8 * 1024
	RingSizeMax     = 1200 * 1024
	RingSizeDefault = 300 * 1024
)

// CaptureOptions configure a live capture.
type CaptureOptions struct {
	// Bus is the bus number; 0 captures all buses.
	Bus int
	// Method is the kernel path (default MethodMmap).
	Method Method
	// RingSize is the binary ring size in bytes (0: kernel default, 300 KiB).
	RingSize int
	// DevDir holds the usbmonN character devices (default /dev).
	DevDir string
	// DebugFS is where debugfs is mounted (default: found in
	// /proc/self/mountinfo, else /sys/kernel/debug). Used by MethodText.
	DebugFS string
	// TextWallClock makes MethodText events carry a wall clock (Sec,
	// Usec, HasWallClock) reconstructed from the text stamp (monotonic
	// clock modulo 4096 s) and the clocks at read time, for outputs that
	// want one (pcap, pcapng). The text stamp itself is kept.
	TextWallClock bool
	// Queue, if > 0, decouples draining the kernel ring from the caller
	// (MethodMmap only): a goroutine of its own, on a thread of its own,
	// fetches events with MON_IOCX_MFETCH, copies each record out of the
	// ring into a user-space queue of about Queue bytes and releases the
	// ring space at once (the next MFETCH's nflush), so the kernel ring
	// only has to hold what arrives while that one thread copies. ReadInto
	// then reads from the queue; a full queue stops the draining (the
	// kernel then drops and says so: never silent). 0: ReadInto fetches
	// from the ring itself (zero copy; the ring is released only after the
	// caller has consumed a batch).
	Queue int
	// Nice, if not 0, is the nice value of the thread that drains the ring
	// (with Queue: the draining thread; else set it on the caller's thread
	// yourself). With Queue, run the goroutine that calls ReadInto at the
	// same priority (runtime.LockOSThread, setpriority on its thread): the
	// two threads share the queue, and a reader starved by the process
	// that makes the traffic holds the draining thread up too.
	// NiceIfAllowed makes a refusal (no CAP_SYS_NICE) silent: the capture
	// then runs at the caller's priority (Stats().Nice says which).
	Nice          int
	NiceIfAllowed bool
	// OnBatch, if set, is called when a batch of events has been handed
	// out and before the capture waits for more: the place to flush output
	// so that a killed capture leaves complete records.
	OnBatch func()
}

// CaptureStats are the counters of a live capture.
type CaptureStats struct {
	Events   uint64 // events delivered
	Dropped  uint64 // events the kernel dropped (MON_IOCG_STATS, or text_lost for text)
	Queued   uint32 // events queued in the kernel at the last query
	Fillers  uint64 // mmap filler records skipped
	Flushed  uint64 // events released from the ring (MFETCH nflush)
	Batches  uint64 // MFETCH calls that returned events
	RingSize int    // ring size in bytes (binary methods)

	// How close the capture came to losing events (MethodMmap):
	RingPeak  int           // most ring bytes in use seen by one MFETCH (records rounded as the kernel stores them)
	BatchPeak int           // most events returned by one MFETCH
	MaxStall  time.Duration // longest time from an MFETCH returning events to the next MFETCH (the ring is not drained meanwhile)
	MaxWait   time.Duration // longest time an event waited in the ring: MFETCH's return time minus the oldest fetched event's kernel stamp
	QueuePeak int           // most bytes waiting in the user-space queue (CaptureOptions.Queue)
	Nice      int           // nice value of the draining thread (0: unchanged)
}
