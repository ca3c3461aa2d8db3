//go:build !linux

package mmiotrace

import "os"

func mapFile(in any) ([]byte, func(), bool) { return nil, nil, false }

func mapFileFromStart(f *os.File) ([]byte, func(), bool) { return nil, nil, false }

func dropMapped([]byte) {}
