// Package unix is iotap's only syscall and ioctl layer. It wraps
// golang.org/x/sys/unix with typed arguments, one function per ioctl and
// errno values wrapped in *os.SyscallError (compare with errors.Is, never
// with ==). Other packages never import golang.org/x/sys/unix directly.
//
// Files are grouped by facility: usbmon_linux.go (usbmon binary API),
// perf_linux.go (perf_event_open), userevents_linux.go (user_events
// ioctls). On other systems other.go provides stand-ins that return
// ErrNotSupported, so that decoding builds on every GOOS. errors.go holds
// the module's one ErrNotSupported.
package unix
