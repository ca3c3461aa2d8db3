package unix

import "errors"

// ErrNotSupported is the module's one "not supported" sentinel: the
// machine, kernel or OS lacks what was asked (a kernel option, a CPU
// feature, Linux itself). Every package exports it under its own name
// (usbmon.ErrNotSupported, intelpt.ErrNotSupported...; all the same
// value) and wraps it with the missing piece and the remedy:
//
//	fmt.Errorf("%w: /dev/usbmon0 missing: load the usbmon module (CONFIG_USB_MON)", ErrNotSupported)
//
// so errors.Is(err, X.ErrNotSupported) holds for any X.
var ErrNotSupported = errors.New("not supported")
