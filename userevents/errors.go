package userevents

import (
	"errors"
	"fmt"
	"syscall"

	iunix "github.com/iotap/iotap/internal/unix"
)

// Sentinel errors. Every error of this package wraps one of them (test with
// errors.Is); errors from the kernel also wrap the raw errno.
var (
	// ErrNotSupported: the kernel has no user_events (CONFIG_USER_EVENTS)
	// or lacks a feature.
	ErrNotSupported = iunix.ErrNotSupported
	// ErrInvalidCommand: a register command or schema the kernel would
	// refuse; caught before any system call (see CommandError).
	ErrInvalidCommand = errors.New("invalid command")
	// ErrNameInUse: EADDRINUSE, the event exists with other fields.
	ErrNameInUse = errors.New("event name in use with other fields")
	// ErrNotEnabled: EBADF from write, nothing is recording the event.
	// Check Enabled before building a payload.
	ErrNotEnabled = errors.New("event not enabled")
	// ErrBadIndex: ENOENT from write, the write index is not registered on
	// this descriptor (unregistered event or closed producer).
	ErrBadIndex = errors.New("write index not registered")
	// ErrTooManyEvents: EMFILE, the system-wide limit of user events
	// (sysctl kernel.user_events_max) is reached.
	ErrTooManyEvents = errors.New("too many user events (kernel.user_events_max)")
	// ErrPermission: EPERM/EACCES; persistent events and deleting them need
	// CAP_PERFMON or CAP_SYS_ADMIN, user_events_data needs write access.
	ErrPermission = errors.New("permission denied")
	// ErrBusy: EBUSY, delete of an event still referenced.
	ErrBusy = errors.New("event busy")
	// ErrNotFound: ENOENT, no such event (delete, unregister).
	ErrNotFound = errors.New("no such event")
	// ErrInvalid: EINVAL from the kernel for an argument we did not
	// catch (flags an older kernel lacks, a payload shorter than the
	// fields).
	ErrInvalid = errors.New("invalid argument")
	// ErrPayload: a value or payload that does not match the schema
	// (wrong type, out of range, string without NUL, too big); caught
	// before the kernel sees it, so write never fails with EFAULT.
	ErrPayload = errors.New("bad payload")
	// ErrClosed: the producer was closed.
	ErrClosed = errors.New("producer closed")
)

// Error is a failed operation on an event.
type Error struct {
	Op    string // register, write, unregister, delete, enable, …
	Event string
	Err   error // one of the sentinels
	Errno error // the kernel's errno, if the kernel failed
	Hint  string
}

func (e *Error) Error() string {
	s := "userevents: " + e.Op
	if e.Event != "" {
		s += " " + e.Event
	}
	s += ": " + e.Err.Error()
	if e.Errno != nil {
		s += fmt.Sprintf(" (%v)", e.Errno)
	}
	if e.Hint != "" {
		s += ": " + e.Hint
	}
	return s
}

// Unwrap returns the sentinel and the errno.
func (e *Error) Unwrap() []error {
	if e.Errno != nil {
		return []error{e.Err, e.Errno}
	}
	return []error{e.Err}
}

// kernelError maps an errno of op to the package's sentinels.
func kernelError(op, event string, err error) error {
	var no syscall.Errno
	if !errors.As(err, &no) {
		return &Error{Op: op, Event: event, Err: err}
	}
	e := &Error{Op: op, Event: event, Errno: no}
	switch no {
	case syscall.EADDRINUSE:
		e.Err = ErrNameInUse
		e.Hint = "delete it first (iotap events delete) or register with the multi-format flag"
	case syscall.EBADF:
		e.Err = ErrNotEnabled
	case syscall.EMFILE:
		e.Err = ErrTooManyEvents
	case syscall.EPERM, syscall.EACCES:
		e.Err = ErrPermission
		if op == "register" || op == "delete" {
			e.Hint = "persistent events and deletes need CAP_PERFMON or CAP_SYS_ADMIN"
		}
	case syscall.EBUSY:
		e.Err = ErrBusy
		e.Hint = "a process still has it registered or a tracer has it enabled"
	case syscall.ENOENT:
		e.Err = ErrNotFound
		if op == "write" {
			e.Err = ErrBadIndex
		}
	case syscall.EINVAL, syscall.E2BIG:
		e.Err = ErrInvalid
	case syscall.EFAULT:
		e.Err = ErrPayload
		e.Hint = "the kernel refused the payload (dynamic field out of bounds or string without NUL)"
	case syscall.ENOTTY:
		e.Err = ErrNotSupported
		e.Hint = "this kernel's user_events_data lacks the ioctl"
	default:
		e.Err = ErrInvalid
	}
	return e
}
