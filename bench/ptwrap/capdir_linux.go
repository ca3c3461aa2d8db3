//go:build linux

package main

import "github.com/iotap/iotap/intelpt/ptsynth"

// writeCaptureDir writes the run and its trace as an 'iotap pt capture'
// directory (ptsynth.WriteCaptureDir: capture.json, thread.pt, its raw
// sideband, mapped_files.json).
func writeCaptureDir(dir string, run *ptsynth.Run, enc *ptsynth.Encoded) error {
	_, err := ptsynth.WriteCaptureDir(dir, &ptsynth.Synthesized{Run: run, Enc: enc}, enc.PT)
	return err
}
