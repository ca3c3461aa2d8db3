// Package cut extracts a time window of a trace in the trace's own format
// (pcapng, pcap, usbmon text, mmiotrace log, user_events NDJSON), with the
// headers a reader needs to interpret it, and builds the sidecar index
// (INPUT.iotapidx) that lets a cut read only the window instead of the
// whole input.
//
// The window is an internal/timerange.Spec: relative to the capture's
// start, on the trace's own clock (@T), wall clock, or a marker
// (mark:NAME). Cut resolves it on the input: the start is the first timed
// record, markers come from the index or from reading the input.
//
// Cut selects records by their own time: [from, to) keeps event records
// stamped inside the window, header records (pcap(ng) section and
// interface blocks, mmiotrace VERSION/PCIDEV/MAP lines) stamped before its
// end, and pcapng interface statistics inside it with counters made
// relative to the window's start. BuildIndex records checkpoints (byte
// offset, the latest time before it and the earliest after it) so that a
// cut with the index reads the same records as one without, however the
// records are ordered. docs/cut.md describes the index format.
package cut
