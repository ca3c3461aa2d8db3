// Package intelpt decodes and encodes Intel Processor Trace (PT) packet
// streams, lists them like libipt's ptdump, reads PT data out of perf.data
// files, and (on Linux, on Intel CPUs) captures PT with perf_event_open and
// the intel_pt PMU.
//
// The packet layer is pure: a Decoder walks a []byte and fills a caller-owned
// Packet without allocating; an Encoder appends packets to a []byte. Bad input
// is reported as a *DecodeError carrying the byte offset, wrapping one of
// ErrBadOpcode, ErrBadPacket or ErrTruncated. A Decoder can synchronise
// forwards and backwards on PSB packets and resynchronise after an error.
//
// Packet encodings follow the Intel SDM (volume 3, chapter "Intel Processor
// Trace"); the listing format and the timing heuristics follow libipt's ptdump
// so that the two tools print the same text for the same trace.
package intelpt
