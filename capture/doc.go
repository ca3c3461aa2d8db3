// Package capture records several sources at once - USB (usbmon), MMIO
// (mmiotrace) and user events (user_events) - with what is needed to put
// them on one clock, into a capture directory. 'iotap capture' is Run
// behind flags; timeline merges the directory (Load gives its traces and
// clocks).
//
// # Session
//
// Run starts the sources (each streams to its file from its own
// goroutine), writes a start marker to every source, runs Options.Command
// (or waits for the device bind, Duration or the context), writes an end
// marker, stops the sources, and writes clocks.json. A source's failure
// stops the others; what each source lost (usbmon drops, user_events and
// mmiotrace lost events) is counted in Result.Loss, never hidden.
//
// # Clocks
//
// Each source stamps events with its own clock. Run measures the offset of
// each onto CLOCK_MONOTONIC:
//
//	usb     usbmon's stamps are CLOCK_REALTIME: the offset is MONOTONIC -
//	        REALTIME, read together (the tightest of five reads)
//	mmio    a trace_marker write "iotap capture start mono=T" lands in the
//	        mmiotrace log as a MARK with the trace clock: offset = T - MARK time
//	events  the user event iotap_marker (u64 mono; char[64] text) written
//	        at T: offset = T - its trace time
//
// T is the midpoint of CLOCK_MONOTONIC read just before and after the
// write. A source whose marker is missing is left unaligned (a warning
// through Options.Logf).
//
// # Directory format (version 1)
//
//	usb.pcapng      usbmon events, pcapng, link type 220 (USB Linux mmapped)
//	mmio.log        the mmiotrace log, as the kernel writes it
//	events.ndjson   user events, NDJSON schema 1 (docs/ndjson.md): an input record,
//	                then user_event records (userevents.AppendNDJSON): ts_ns (trace
//	                clock), cpu, tid, system, name, fields
//	clocks.json     timeline.Clocks: version, common ("CLOCK_MONOTONIC"),
//	                sources{usb,mmio,events: {clock, offset_ns}}, markers
//
// Files are created 0600 in a directory created 0700 (or an existing empty
// one); nothing is written over. A source's file exists only when it was
// captured. clocks.json's "version" is the format version; readers refuse
// a newer one (timeline.ReadClocks), and a file without it is version 1.
//
// On systems other than Linux, Run returns an error wrapping
// ErrNotSupported; Load works everywhere.
package capture
