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
// On top of the packets, InsnDecoder and BlockDecoder reconstruct the
// executed instructions over a memory Image (raw files, ELF segments or
// caller-supplied sections per address space), with libipt's semantics:
// events (Event) for everything that is not a plain branch, errors as
// *FlowError with the trace offset and IP, resynchronisation after errors.
// FlowListing prints the flow like libipt's ptxed.
//
// Packet encodings follow the Intel SDM (volume 3, chapter "Intel Processor
// Trace"); the listing format and the timing heuristics follow libipt's ptdump
// so that the two tools print the same text for the same trace.
package intelpt
