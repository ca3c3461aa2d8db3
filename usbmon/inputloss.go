package usbmon

import (
	"errors"
	"fmt"
)

// InputLoss lists what reading an input lost, in the words every iotap
// command uses: a truncated input (readErr wraps ErrTruncated; the events
// before the cut were read), unreadable lines skipped (text), and the
// events the capture records as dropped by the kernel (pcapng isb_ifdrop).
// A readErr other than truncation is returned as err.
func InputLoss(readErr error, skipped, dropped uint64) (lost []string, err error) {
	if readErr != nil {
		if !errors.Is(readErr, ErrTruncated) {
			return nil, readErr
		}
		lost = append(lost, readErr.Error())
	}
	if skipped > 0 {
		lost = append(lost, fmt.Sprintf("%d unreadable lines skipped", skipped))
	}
	if dropped > 0 {
		lost = append(lost, fmt.Sprintf("the capture records %d events dropped by the kernel", dropped))
	}
	return lost, nil
}

// ReaderLoss is [InputLoss] of what r counted (a [Skipper]'s lines
// skipped, a pcapng reader's Dropped) once reading ended with readErr.
func ReaderLoss(r Reader, readErr error) (lost []string, err error) {
	var skipped, dropped uint64
	if s, ok := r.(Skipper); ok {
		skipped = uint64(s.Skipped())
	}
	if d, ok := r.(interface{ Dropped() uint64 }); ok {
		dropped = d.Dropped()
	}
	return InputLoss(readErr, skipped, dropped)
}
