//go:build !linux

package intelpt

import (
	"os"

	"github.com/iotap/iotap/internal/mapfile"
)

func mapFile(*os.File, int) (*mapfile.Mapping, bool) { return nil, false }
func dropPages([]byte)                               {}

const canMap = false
