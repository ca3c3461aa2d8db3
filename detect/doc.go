// Package detect recognises the traces iotap reads from their content,
// never from their name, and says why when an input is not one:
//
//   - usbmon: pcap and pcapng of link type 189 or 220, the binary /dev/usbmonN
//     format, text 1u/1t — the first event must decode;
//   - mmiotrace logs: the first line that is not a comment must be an
//     mmiotrace record, and a record must appear in the first lines;
//   - user_events NDJSON (iotap events record --json): the first line is a
//     JSON object with "name" and "ts";
//   - Intel PT: raw PT with a PSB packet (where decoding starts) in the
//     head, or a perf.data file.
//
// Compressed inputs (gzip, xz, zstd: by magic bytes) are decompressed and
// the content is detected again: a gzipped README is "gzip-compressed text",
// not a log. Errors are *NotTraceError, matching ErrNotTrace with errors.Is.
//
// Detection looks at the first HeadSize bytes only: a line-level error
// further into a valid trace is the reader's business (a counted loss with
// its line number), not a reason to call the input something else.
package detect
