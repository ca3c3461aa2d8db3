package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/usbmon"
	"github.com/iotap/iotap/userevents"
)

// TestOneErrNotSupported: the module has one ErrNotSupported, exported by
// every package that captures, so that a caller tests any of them.
func TestOneErrNotSupported(t *testing.T) {
	all := []error{usbmon.ErrNotSupported, mmiotrace.ErrNotSupported, userevents.ErrNotSupported, intelpt.ErrNotSupported}
	for i, e := range all {
		err := fmt.Errorf("x: %w: missing piece", e)
		for j, o := range all {
			if !errors.Is(err, o) {
				t.Errorf("sentinel %d does not match sentinel %d", i, j)
			}
		}
	}
}
