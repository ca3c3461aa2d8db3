//go:build !linux

package intelpt

import "os"

func mapFile(*os.File, int) ([]byte, bool) { return nil, false }
func unmapFile([]byte)                     {}
func dropPages([]byte)                     {}
