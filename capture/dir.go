package capture

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/timeline"
)

// Dir is a capture directory read back.
type Dir struct {
	Path string
	// Clocks is clocks.json (nil when the directory has none: its traces
	// are then not aligned).
	Clocks *timeline.Clocks
	// Traces are the files holding a trace timeline.Detect recognises,
	// by name (clocks.json, hidden and other files are left out): what
	// package detect recognises.
	Traces []string
}

// Load reads the capture directory at path: its clocks file and the
// traces in it (not recursively). Give Traces and Clocks to
// timeline.Export to merge them on one clock.
func Load(path string) (*Dir, error) {
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	d := &Dir{Path: path}
	for _, e := range ents {
		p := filepath.Join(path, e.Name())
		if e.Name() == ClocksFile {
			if d.Clocks, err = timeline.LoadClocks(p); err != nil {
				return nil, err
			}
			continue
		}
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if ok, err := isTrace(p); err != nil {
			return nil, err
		} else if ok {
			d.Traces = append(d.Traces, p)
		}
	}
	sort.Strings(d.Traces)
	return d, nil
}

func isTrace(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head, complete, _, err := detect.ReadHead(f)
	if err != nil {
		return false, err
	}
	_, derr := detect.Head(head, complete)
	return derr == nil, nil
}
