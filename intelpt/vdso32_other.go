//go:build !linux

package intelpt

import "fmt"

func readVDSO32() (image, buildID []byte, err error) {
	return nil, nil, fmt.Errorf("intelpt: vdso32: %w", ErrNotSupported)
}
