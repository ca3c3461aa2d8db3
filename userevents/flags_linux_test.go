package userevents

import (
	"testing"

	iunix "github.com/iotap/iotap/internal/unix"
)

// The portable flag values are the kernel's (include/uapi/linux/user_events.h).
func TestFlagsMatchUAPI(t *testing.T) {
	if Persist != iunix.USER_EVENT_REG_PERSIST || MultiFormat != iunix.USER_EVENT_REG_MULTI_FORMAT {
		t.Errorf("Persist %d, MultiFormat %d", Persist, MultiFormat)
	}
}
