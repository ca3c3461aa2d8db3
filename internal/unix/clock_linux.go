package unix

import "golang.org/x/sys/unix"

// Clock ids for ClockNS.
const (
	ClockRealtime  = unix.CLOCK_REALTIME
	ClockMonotonic = unix.CLOCK_MONOTONIC
	ClockBoottime  = unix.CLOCK_BOOTTIME
)

// ClockNS reads clock id (clock_gettime(2)) in nanoseconds.
func ClockNS(id int32) (int64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		return 0, err
	}
	return ts.Nano(), nil
}
