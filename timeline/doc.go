// Package timeline merges the events of every iotap source on one clock and
// exports them as a Perfetto trace (https://perfetto.dev), so that the MMIO
// writes a driver made while a USB transfer was pending, and the user_events
// a program emitted around them, are seen together.
//
// # Sources
//
// A Source is one input: events in time order on its own clock, which it
// draws on a Canvas (the Writer and its top-level track). Merge merges any
// sources; the source packages' readers are adapted by NewUSBSource
// (usbmon.Reader: a file or a live capture), NewMMIOSource
// (mmiotrace.Reader), NewEventsSource (user_events NDJSON), NewPTSource and
// NewPerfDataSources (Intel PT). Open makes the sources of a file, its
// format detected by Detect; a library user merges its own events by
// implementing Source (see ExampleMerge).
//
// # Export
//
// Export opens its inputs with Open and merges them with Merge. It reads
// its inputs (files whose format is detected from their
// content: usbmon text, pcap or pcapng; mmiotrace logs, plain or compressed;
// user_events NDJSON as written by 'iotap events record --json') through the
// source packages' streaming readers, merges them by timestamp (a k-way merge:
// one event per input in memory) and writes a Perfetto trace with Writer:
//
//   - one top-level track per input, and a "markers" track;
//   - USB: a track per bus, device and endpoint; every transfer a slice from
//     its submission to its completion (several URBs in flight on one
//     endpoint go on lanes "ep 1 IN bulk #2"...), named after its request
//     (GET_DESCRIPTOR, bulk IN...) with the decoded setup, CBW/CSW or
//     descriptor as arguments; submission errors and completions without a
//     submission are instants; a bandwidth counter per device (bytes
//     completed per second over a window, 100 ms by default);
//   - MMIO: a track per PCI device BAR; every access an instant "R STATUS",
//     "W IMC" named from a register database (Options.DB, else the shipped
//     database declaring the device) with the value, its decoding and the
//     offset as arguments; MAP/UNMAP and undecodable instructions are
//     instants; "Lost N events" marks are counted and flagged as data loss;
//   - user_events: a track per event name, every record an instant with its
//     fields as arguments;
//   - markers (mmiotrace MARK records, the user event MarkerEvent, the
//     markers of the clocks file) are instants on every input's track.
//
// # Traces of any length
//
// ExportSplit never writes a file larger than a bound (DefaultMaxSize,
// 256 MiB: what the Perfetto UI opens comfortably). When the full detail
// is larger it writes an overview of the whole capture (exact counts per
// time bucket: USB bytes, transfers and errors per endpoint, MMIO accesses
// per BAR and busiest register, user_events per name; losses, markers, a
// slice naming the file of each detail window) and the full detail split
// at time boundaries into windows under the bound, each a trace of its own
// (Writer.Rotate), with an index.json (Index).
//
// # Clocks
//
// Each source has its own clock (see Clocks). A clocks file (clocks.json,
// written by 'iotap capture') gives per source the offset onto one common
// clock. Without it, each input's first event is placed at time 0 and a
// warning says the sources are not aligned.
//
// # Perfetto writer
//
// Writer encodes TracePackets with protowire and writes each one as soon as
// it is complete (field 1 of perfetto.protos.Trace): memory does not grow
// with the trace, and once a name is interned an event costs no allocation. Event names, categories and argument names are interned
// (bounded tables, see MaxInterned) on one packet sequence. The field
// numbers come from Perfetto's published perfetto_trace.proto, a copy of
// which is in testdata/perfetto for the tests (protoc --decode).
package timeline
