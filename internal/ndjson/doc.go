// Package ndjson writes the records of iotap's --json outputs: one JSON
// object per line (NDJSON), built by appending to a reused []byte with
// strconv.Append*-style functions, without encoding/json's reflection and
// without allocating per record once the buffer has grown.
//
// The vocabulary of the records (field names, units, kinds, the schema
// version) is documented in docs/ndjson.md; the encoders of each source
// live in the source's package (usb, mmiotrace, userevents, intelpt,
// timeline, report) and use the functions here. Every function appends a
// key (with the separating comma when one is needed) and its value:
//
//	b = ndjson.Begin(b, "usb_event")   // {"kind":"usb_event"
//	b = ndjson.Uint(b, "seq", 7)       // ,"seq":7
//	b = ndjson.Null(b, "latency_ns")   // ,"latency_ns":null
//	b = ndjson.End(b)                  // }\n
//
// Whether a comma is needed is read from the last byte of b: none after
// '{' or '[', one otherwise. Keys are the callers' constants and are not
// escaped; string values are escaped as JSON requires (quotes, backslash,
// control characters; invalid UTF-8 becomes U+FFFD, as encoding/json does).
package ndjson
