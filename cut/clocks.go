package cut

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/iotap/iotap/internal/timerange"
)

// ClocksFile is the name of a capture directory's clock sidecar (package
// timeline's Clocks, written by 'iotap capture'): for each source (a file
// name, or a source kind: usb, mmio, events, pt) the offset that maps its
// clock onto the capture's common clock, and markers on that clock.
const ClocksFile = "clocks.json"

// dirClocks is what a window reads of a clocks file.
type dirClocks struct {
	Sources map[string]struct {
		OffsetNS int64 `json:"offset_ns"`
	} `json:"sources"`
	Markers []struct {
		Name string `json:"name"`
		NS   int64  `json:"ns"`
	} `json:"markers"`
}

// sourceKind is the clocks file's name of the source a format records.
func sourceKind(f Format) string {
	switch f {
	case FormatMMIO:
		return "mmio"
	case FormatUSBText, FormatPcap, FormatPcapng:
		return "usb"
	case FormatEvents:
		return "events"
	}
	return "" // Intel PT: TSC ticks, not placed here
}

// offset returns the offset of the trace at path (format f) to the
// common clock: by its file name, else by its source kind.
func (c *dirClocks) offset(path string, f Format) (int64, bool) {
	if s, ok := c.Sources[filepath.Base(path)]; ok && sourceKind(f) != "" {
		return s.OffsetNS, true
	}
	s, ok := c.Sources[sourceKind(f)]
	return s.OffsetNS, ok && sourceKind(f) != ""
}

// CommonSpec places spec on the common clock of the capture directory
// dir (its clocks.json), for the ends that depend on more than one trace:
//   - mark:NAME: a marker of any of its traces (at its time plus the
//     trace's offset) or of the clocks file, the first in common time
//     named NAME, else the first whose text starts with NAME;
//   - seconds from the capture's start (1.5, and --to +D without --from):
//     from the capture's first timed record, the earliest first record of
//     its traces on the common clock, not each trace's own first record.
//
// It returns, for each trace of the directory, spec with those ends as @T
// on the trace's own clock (a trace whose clock the file does not place,
// such as Intel PT, keeps spec: its own markers and start). Without a
// clocks file, or without such ends, it returns nil. A name no marker has
// is a *WindowError. OpenWindow and export use it for a directory.
func CommonSpec(ctx context.Context, dir string, spec timerange.Spec) (func(path string) timerange.Spec, error) {
	relative := (spec.HasFrom && spec.From.Base == timerange.Relative) ||
		(spec.HasTo && (spec.To.Base == timerange.Relative || (spec.To.Base == timerange.AfterFrom && !spec.HasFrom)))
	if len(spec.Marks()) == 0 && !relative {
		return nil, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, ClocksFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var dc dirClocks
	if err := json.Unmarshal(b, &dc); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, ClocksFile), err)
	}
	type mark struct {
		text string
		ns   int64
	}
	var marks []mark
	var start int64 // the capture's first timed record on the common clock
	var hasStart bool
	for _, m := range dc.Markers {
		marks = append(marks, mark{m.Name, m.NS})
	}
	formats := map[string]Format{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if !e.Type().IsRegular() || filepath.Ext(p) == IndexSuffix || !isTrace(p, func(string) {}) {
			continue
		}
		in, closer, err := OpenFile(p, true, nil)
		if err != nil {
			continue
		}
		f, err := (&cutter{in: in, res: &Result{}}).sniff()
		if err == nil {
			formats[p] = f
		}
		off, ok := dc.offset(p, f)
		var ms []Marker
		if err == nil && ok && len(spec.Marks()) > 0 {
			ms, err = Markers(ctx, in)
		}
		if err == nil && ok && relative {
			var c timerange.Clock
			if c, err = Clock(ctx, in, timerange.Spec{}); err == nil && c.HasStart {
				if t := c.Start + off; !hasStart || t < start {
					start, hasStart = t, true
				}
			}
		}
		closer.Close()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		for _, m := range ms {
			marks = append(marks, mark{m.Text, m.Time + off})
		}
	}
	sort.SliceStable(marks, func(i, j int) bool { return marks[i].ns < marks[j].ns })
	texts := make([]string, len(marks))
	for i, m := range marks {
		texts[i] = m.text
	}
	at := map[string]int64{}
	for _, name := range spec.Marks() {
		i := timerange.MatchMarker(texts, name)
		if i < 0 {
			return nil, &WindowError{Err: fmt.Errorf("mark:%s: no marker of that name in the capture %s (its traces and %s)", name, dir, ClocksFile)}
		}
		at[name] = marks[i].ns
	}
	return func(path string) timerange.Spec {
		off, ok := dc.offset(path, formats[path])
		if !ok {
			return spec
		}
		s := spec
		if s.HasTo && s.To.Base == timerange.AfterFrom && !s.HasFrom {
			s.To.Base = timerange.Relative // +D without --from: D after the start
		}
		for _, p := range []*timerange.Point{&s.From, &s.To} {
			switch {
			case p.Base == timerange.Mark:
				*p = timerange.Point{Base: timerange.Absolute, NS: at[p.Mark] - off}
			case p.Base == timerange.Relative && hasStart:
				*p = timerange.Point{Base: timerange.Absolute, NS: start + p.NS - off}
			}
		}
		return s
	}, nil
}
