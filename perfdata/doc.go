// Package perfdata reads perf.data files, the output of perf record: the
// header, the event attributes, the feature sections, and the records in
// file order, file mode (over an io.ReaderAt) and pipe mode (also from a
// stream). The compressed records of perf record -z (zstd, one stream
// across records) are inflated and their records returned like the
// others.
//
// It is the one perf.data reader of iotap: package intelpt takes the
// Intel PT trace data and the sideband from it, package userevents the
// tracepoint samples. It knows the file's structure, not what the records
// mean: a Record is the record's bytes, its type, and where it is.
//
// Malformed input is an *Error with the byte offset where it was found
// (errors.Is(err, ErrInvalid)); Error.Truncated tells a file cut short (perf
// killed, disk full) from a corrupt one. Nothing here panics on any input
// (FuzzReader).
//
// The layout is perf's: tools/perf/Documentation/perf.data-file-format.txt
// in the Linux sources.
package perfdata
