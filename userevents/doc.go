// Package userevents is a producer and a consumer of Linux user_events
// (CONFIG_USER_EVENTS, Linux 6.4 or later): user-space tracepoints that
// ftrace, perf and eBPF record like kernel events.
//
// Producer side: Open opens tracefs's user_events_data once; Register
// describes an event with a command such as "req u32 id; __rel_loc char[]
// path" (or RegisterStruct from a Go struct) and returns an Event whose
// Enabled is a single atomic load of an enable word the kernel updates,
// and whose Write encodes the fields and issues one system call without
// allocating: pwrite(2) of one stack buffer holding the write index and the
// payload when every field is an integer (for Typed.Write: no strings or
// slices) and the payload is at most 128 bytes, else writev(2) of the
// index and the payload. (Every Go program is multi-threaded, and the
// kernel takes the file's f_pos mutex on each write or writev of such a
// process, not on pwrite.) Commands and payloads are validated before the kernel sees
// them (ParseCommand, Schema.ValidatePayload); kernel errors wrap the
// package's sentinels and the errno.
//
// The enable words live in anonymous mmap'd pages, outside the Go heap:
// the kernel writes them asynchronously for as long as the registration
// lives, so they must never move nor be reused. All register and
// unregister ioctls of a Producer run on one locked OS thread, because the
// kernel keeps registrations per thread (shared only with threads created
// later).
//
// Consumer side, pure and kernel-free: ParseStatus (user_events_status),
// ParseFormat (an event's format file), Format.Decode (a raw record),
// DecodePage (the per-CPU trace_pipe_raw ring-buffer page format, with
// lost events counted), DecodePerfRecord (perf ring records), TextReader
// (trace_pipe text), AppendNDJSON (docs/ndjson.md), PerfDataReader (the tracepoint samples
// of a perf.data file, decoded with the formats stored in it) and
// ParseTracingData; EventHeader events (LinuxTracepoints' self-describing
// convention, package eventheader) are decoded wherever a format is the
// EventHeader one (IsEventHeader). On Linux, Recorder enables events in a
// private ftrace instance and reads them back from the per-CPU binary
// buffers; PerfReader reads them through perf rings instead.
//
// Fork and exec: a child created by fork(2) from the producer's thread
// inherits the registrations (the kernel duplicates them; the child's copy
// of each enable word keeps following the tracers and it can write through
// the inherited descriptor) and keeps the events referenced until it
// exits. execve(2) drops every registration of the process, and the
// descriptor is close-on-exec. Go programs start children with os/exec
// (fork then exec), so children start without registrations.
//
// Lifetime: an event lives while a descriptor that registered it is
// open, a process has it registered, or a tracer has it enabled; then the
// kernel deletes it, unless it was registered with Persist.
package userevents
