// Package unix is iotap's only syscall and ioctl layer. It wraps
// golang.org/x/sys/unix with typed arguments, one function per ioctl and
// errno values wrapped in *os.SyscallError (compare with errors.Is, never
// with ==). Other packages never import golang.org/x/sys/unix directly.
//
// Files are grouped by facility: usbmon.go (usbmon binary API), perf.go
// (perf_event_open), userevents.go (user_events ioctls).
package unix
