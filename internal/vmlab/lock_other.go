//go:build !linux

package vmlab

import "os"

// lockFile does nothing off Linux, where the lab does not run.
func lockFile(*os.File) error { return nil }
