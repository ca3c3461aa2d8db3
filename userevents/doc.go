// Package userevents is a producer and a consumer of Linux user_events
// (CONFIG_USER_EVENTS, Linux 6.4 or later): user-space tracepoints that
// ftrace, perf and eBPF record like kernel events.
//
// Producer side: Open opens tracefs's user_events_data once; Register
// describes an event with a command such as "req u32 id; __rel_loc char[]
// path" (or RegisterStruct from a Go struct) and returns an Event whose
// Enabled is a single atomic load of an enable word the kernel updates,
// and whose Write encodes the fields and issues one writev(2) without
// allocating.
//
// Consumer side, pure and kernel-free: ParseStatus (user_events_status),
// ParseFormat (an event's format file), Format.Decode (a raw record),
// PageReader (the per-CPU trace_pipe_raw ring-buffer page format, with lost
// events counted); Recorder (Linux) enables events and reads them back.
//
// Fork and exec: a child created by fork(2) inherits the registrations: the
// kernel duplicates each enable word registration into the child, whose
// copy of the word keeps following the event's state, and the child may
// write through the inherited descriptor. execve(2) drops every
// registration of the process (the descriptor is close-on-exec too).
//
// Lifetime: an event lives while a descriptor that registered it is
// open, a process has it registered, or a tracer has it enabled; then the
// kernel deletes it, unless it was registered with Persist.
package userevents
