// Package tracefs finds and drives the kernel's tracing file system
// (tracefs, and debugfs where older facilities live): tracers, trace_pipe,
// trace_marker, ring buffer sizes, per-CPU statistics and event control.
//
// Mount points are discovered from /proc/self/mountinfo, falling back to the
// usual paths, and are never hard-coded in callers. Tests inject a directory
// with New. Every path below the root is built with Path, which refuses
// names that would escape the root, so user input (an event name, a CPU
// number) can never reach another file.
package tracefs
