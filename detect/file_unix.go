//go:build unix

package detect

import (
	"errors"
	"syscall"
)

func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
