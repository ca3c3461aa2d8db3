package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/iotap/iotap/tracefs"
	"github.com/iotap/iotap/userevents"
)

// TestEventsRemedyOnce: the remedy of a kernel without user_events names
// CONFIG_USER_EVENTS once. userevents' own error (a tracefs without
// user_events_status) already says the kernel needs it, so the command
// adds only 'iotap doctor'; it used to ask about CONFIG_USER_EVENTS
// again. An error without such a hint still gets the question.
func TestEventsRemedyOnce(t *testing.T) {
	_, err := userevents.ReadStatus(tracefs.New(t.TempDir()))
	if !errors.Is(err, userevents.ErrNotSupported) {
		t.Fatalf("ReadStatus of an empty tracefs: %v, want ErrNotSupported", err)
	}
	bare := &userevents.Error{Op: "open", Err: userevents.ErrNotSupported}
	for _, err := range []error{err, bare} {
		msg := explain(err).Error()
		if n := strings.Count(msg, "CONFIG_USER_EVENTS"); n != 1 || !strings.HasSuffix(msg, "try 'iotap doctor')") {
			t.Errorf("%q: CONFIG_USER_EVENTS %d times, want once, and 'iotap doctor' at the end", msg, n)
		}
	}
}
