//go:build linux

package userevents

import (
	"errors"
	"time"

	"github.com/iotap/iotap/tracefs"
)

// WriteOnce registers s (with flags) on fs and writes one event with vals,
// as 'iotap events write' does. When nothing records the event, nothing is
// written: the error is ErrNotEnabled itself when the event was not
// enabled, and wraps it when it was disabled before the write.
func WriteOnce(fs *tracefs.FS, s *Schema, flags Flags, vals ...any) error {
	return writeOnce(fs, s, flags, func(ev *Event) error { return ev.Write(vals...) })
}

// WriteOnceRaw is WriteOnce with the payload as is (EventHeaderEvent's).
func WriteOnceRaw(fs *tracefs.FS, s *Schema, flags Flags, payload []byte) error {
	return writeOnce(fs, s, flags, func(ev *Event) error { return ev.WriteRaw(payload) })
}

func writeOnce(fs *tracefs.FS, s *Schema, flags Flags, write func(*Event) error) error {
	p, err := OpenFS(fs)
	if err != nil {
		return err
	}
	defer p.Close()
	ev, err := p.RegisterSchema(s, flags)
	if err != nil {
		return err
	}
	if !ev.Enabled() {
		return ErrNotEnabled
	}
	return write(ev)
}

// RegisterFS registers s with flags on fs and returns the tracepoint it
// got and the flags the kernel kept ('iotap events register'; with
// Persist the event outlives the process).
func RegisterFS(fs *tracefs.FS, s *Schema, flags Flags) (system, name string, got Flags, err error) {
	p, err := OpenFS(fs)
	if err != nil {
		return "", "", 0, err
	}
	defer p.Close()
	ev, err := p.RegisterSchema(s, flags)
	if err != nil {
		return "", "", 0, err
	}
	system, name, err = Tracepoint(fs, s, ev.Flags())
	return system, name, ev.Flags(), err
}

// DeleteWait deletes the event name, retrying while it is busy for up to
// wait: a process that just exited or exec'd releases its registrations
// after an RCU grace period.
func DeleteWait(fs *tracefs.FS, name string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := DeleteFS(fs, name)
		if !errors.Is(err, ErrBusy) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}
