//go:build !linux

package main

import "testing"

// ptsynthPerfData: ptsynth runs on Linux only.
func ptsynthPerfData(t *testing.T) string { return "" }
