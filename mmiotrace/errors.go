package mmiotrace

import "errors"

// ErrNotSupported is wrapped when the kernel cannot trace MMIO: no tracefs
// or no mmiotrace tracer (CONFIG_MMIOTRACE).
var ErrNotSupported = errors.New("not supported")

// ErrBusy is wrapped when another tracer is active and Force is not set.
var ErrBusy = errors.New("tracer busy")
