package mmiotrace

import (
	"errors"
	"fmt"

	iunix "github.com/iotap/iotap/internal/unix"
)

// ErrNotSupported is wrapped when the kernel cannot trace MMIO: no tracefs
// or no mmiotrace tracer (CONFIG_MMIOTRACE).
var ErrNotSupported = iunix.ErrNotSupported

// ErrBusy is wrapped when another tracer is active and Force is not set.
var ErrBusy = errors.New("tracer busy")

// ArgError is the error of an options field whose value is out of range
// (ConvertLog, FilterLog, ReadLog: a negative Workers), before any input
// is read: Field names it ("ConvertOptions.Workers"), Want says what is
// taken.
type ArgError struct {
	Field string
	Value any
	Want  string
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("mmiotrace: %s %v: want %s", e.Field, e.Value, e.Want)
}

// checkWorkers is the *ArgError of a negative Workers of the options
// opts ("ConvertOptions"), nil for 0 (chosen) or more.
func checkWorkers(opts string, n int) error {
	if n < 0 {
		return &ArgError{Field: opts + ".Workers", Value: n, Want: "0 (chosen by the input) or more"}
	}
	return nil
}
