//go:build !linux

package userevents

import (
	"fmt"
	"time"

	"github.com/iotap/iotap/tracefs"
)

// WriteOnce needs Linux's user_events: elsewhere it returns
// ErrNotSupported.
func WriteOnce(fs *tracefs.FS, s *Schema, flags Flags, vals ...any) error { return notHere() }

// WriteOnceRaw needs Linux: elsewhere it returns ErrNotSupported.
func WriteOnceRaw(fs *tracefs.FS, s *Schema, flags Flags, payload []byte) error { return notHere() }

// RegisterFS needs Linux: elsewhere it returns ErrNotSupported.
func RegisterFS(fs *tracefs.FS, s *Schema, flags Flags) (system, name string, got Flags, err error) {
	return "", "", 0, notHere()
}

// DeleteWait needs Linux: elsewhere it returns ErrNotSupported.
func DeleteWait(fs *tracefs.FS, name string, wait time.Duration) error { return notHere() }

func notHere() error { return fmt.Errorf("%w: user_events needs Linux", ErrNotSupported) }
