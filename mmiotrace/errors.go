package mmiotrace

import (
	"errors"

	iunix "github.com/iotap/iotap/internal/unix"
)

// ErrNotSupported is wrapped when the kernel cannot trace MMIO: no tracefs
// or no mmiotrace tracer (CONFIG_MMIOTRACE).
var ErrNotSupported = iunix.ErrNotSupported

// ErrBusy is wrapped when another tracer is active and Force is not set.
var ErrBusy = errors.New("tracer busy")
