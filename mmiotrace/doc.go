// Package mmiotrace reads, writes, filters and analyses the text log of the
// Linux mmiotrace tracer (kernel/trace/trace_mmiotrace.c, CONFIG_MMIOTRACE),
// and captures it live through tracefs (capture_linux.go).
//
// # Log model
//
// One line of the log is one [Record]. Its [Kind] says which fields are
// meaningful:
//
//	R/W      Width, Time, MapID, Phys, Value, PC, PID
//	MAP      Time, MapID, Phys, Virt, Len, PC, PID
//	UNMAP    Time, MapID (-1 when the kernel did not know the mapping), PC, PID
//	UNKNOWN  Time, MapID, Phys, Opcode (three instruction bytes), PC, PID
//	MARK     Time, Text (the marker, without the newline; the kernel's
//	         "Lost N events." marks are MARKs too, see Record.Lost)
//	VERSION  Text ("20070824")
//	LSPCI    Text (one line of lspci -v)
//	PCIDEV   PCI (bus, devfn, ids, IRQ, 7 resource bases with flag bits and
//	         7 sizes, driver name or empty)
//	Comment  Text: a line starting with '#' (the "# tracer: mmiotrace"
//	         header that the tracefs "trace" file prints)
//	Other    Text: any other line, kept verbatim so nothing is lost
//
// Timestamps keep the number of fractional digits they were written with
// (the kernel prints microseconds, "%u.%06lu"; older tools wrote other
// precisions), so reading then writing a kernel log gives it back byte for
// byte.
//
// # Reading
//
// [Reader] streams records without allocating per record: [Reader.ReadInto]
// fills a caller-owned Record whose byte slices (Text, Line, PCI.Driver)
// point into the reader's buffer and stay valid only until the next call.
// Use [Record.Clone] to keep one. Input compressed with gzip, xz or zstd is
// detected from its magic bytes and decompressed transparently. A line that
// starts with a known keyword but does not parse is a [*ParseError] carrying
// its line number; with [Reader.SetKeepGoing] such lines are skipped and
// counted ([Reader.Skipped]).
//
// # Writing
//
// [Writer] formats records exactly as the kernel does. [NewCompressWriter]
// adds gzip, xz or zstd compression.
//
// # Filtering
//
// [FilterLog] copies the lines that pass a [Filter] byte for byte, keeping
// the records needed to interpret them. Without a marker window it cuts
// the input into chunks that all cores parse. Every line is validated,
// kept or not, exactly as [Reader] validates it: a bad line is a
// [*ParseError] with its line number in the whole input, or, with
// FilterOptions.KeepGoing, skipped and counted (FilterStats.Skipped).
//
// # Capture
//
// [Capture] (Linux) runs the tracer and streams trace_pipe. Markers come
// from CaptureOptions.Marks, a named pipe (MarkerFIFO) or a unix socket
// (MarkerSocket, created 0600 for the capture and removed afterwards):
// each line written to them becomes a MARK record.
//
// # PCI BARs
//
// [BARMap] learns BARs from PCIDEV records and mappings from MAP/UNMAP
// records, and resolves a physical address to (PCI address, BAR, offset):
// the basis of BAR-relative filtering, register naming and replay.
package mmiotrace
