package capture

import (
	"github.com/iotap/iotap/timeline"
)

// Dir is a capture directory read back.
type Dir struct {
	Path string
	// Clocks is clocks.json (nil when the directory has none: its traces
	// are then not aligned).
	Clocks *timeline.Clocks
	// Traces are the files holding a trace package detect recognises,
	// by name (clocks.json, hidden and other files are left out):
	// timeline.DirInputs.
	Traces []string
}

// Load reads the capture directory at path: its clocks file and the
// traces in it (not recursively). Give Traces and Clocks to
// timeline.Export to merge them on one clock.
func Load(path string) (*Dir, error) {
	traces, clocks, err := timeline.DirInputs(path)
	if err != nil {
		return nil, err
	}
	d := &Dir{Path: path, Traces: traces}
	if clocks != "" {
		if d.Clocks, err = timeline.LoadClocks(clocks); err != nil {
			return nil, err
		}
	}
	return d, nil
}
