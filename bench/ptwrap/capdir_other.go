//go:build !linux

package main

import (
	"errors"

	"github.com/iotap/iotap/intelpt/ptsynth"
)

func writeCaptureDir(string, *ptsynth.Run, *ptsynth.Encoded) error {
	return errors.New("-capdir: capture directories are written on Linux only")
}
