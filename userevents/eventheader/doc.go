// Package eventheader reads and writes EventHeader events, the
// self-describing user_events convention of microsoft/LinuxTracepoints
// (eventheader.h) that its C, C++, Rust and .NET providers write.
//
// Many events share one tracepoint named Provider_L<level>K<keyword>
// [options] (lowercase hex, e.g. "MyProvider_L4K1Gmygroup"), registered
// with the fields CommandTypes. Each record's payload starts with an
// 8-byte Header (flags: pointer size, byte order, extensions present;
// version, id, tag, opcode, level), then extension blocks (u16 size, u16
// kind with a chain bit): a metadata block (the event name, then per field
// a NUL-terminated name, an encoding byte with array flags, optional
// format byte and tag, optional constant array length) and an activity-id
// block (16 or 32 bytes); then the field values.
//
// Decode parses an event given its tracepoint name; AppendJSON prints it
// in the JSON shape of LinuxTracepoints' decoder (perf-decode), checked
// against its output on LinuxTracepoints' own test files. Append builds
// an event (little-endian, with metadata) for a producer. Decoding is pure
// and bounded: malformed input is an *Error with its byte offset.
package eventheader
