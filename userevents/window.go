package userevents

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/iotap/iotap/internal/timerange"
)

// markerEvent is the user event iotap capture writes as a marker (its
// "text" field names it).
const markerEvent = "iotap_marker"

// PerfDataWindow places the window spec (--from/--to, the project's time
// syntax) on the user events of the perf.data file at path: @T is the
// samples' time in seconds, relative ends count from the first event, and
// mark:NAME is the first iotap_marker event whose text field is NAME (else
// starts with NAME). An RFC 3339 end needs the file's wall clock (the
// clock data perf record writes with --clockid): the first event's wall
// time places it.
// The file is read from its start only when an end needs it. Keep the
// events whose TS is inside the returned window (Window.Contains).
//
// A window that does not resolve on the file (no marker NAME, a wall
// clock the file lacks, a relative end on standard input) is an
// *ArgError with Arg "window" naming the file; an error reading the file
// names it too.
func PerfDataWindow(ctx context.Context, path string, spec timerange.Spec) (timerange.Window, error) {
	abs := func(has bool, p timerange.Point) bool { return !has || p.Base == timerange.Absolute }
	var clock timerange.Clock
	if !abs(spec.HasFrom, spec.From) || !abs(spec.HasTo, spec.To) {
		if path == "-" {
			return timerange.Window{}, &ArgError{"window", errors.New("standard input is read once: give --from/--to as @T (the samples' time), or the file")}
		}
		var err error
		if clock, err = perfDataClock(ctx, path, spec.Marks()); err != nil {
			return timerange.Window{}, err
		}
	}
	win, err := spec.Resolve(clock)
	if err != nil {
		if path != "-" {
			err = fmt.Errorf("%s: %w", path, err)
		}
		return win, &ArgError{"window", err}
	}
	return win, nil
}

// perfDataClock reads the first event's time and the markers named in
// marks.
func perfDataClock(ctx context.Context, path string, marks []string) (timerange.Clock, error) {
	var clock timerange.Clock
	f, err := os.Open(path)
	if err != nil {
		return clock, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return clock, err
	}
	r, err := NewPerfDataReader(f, st.Size())
	if err != nil {
		return clock, fmt.Errorf("%s: %w", path, err)
	}
	defer r.Close()
	var names []string
	var times []int64
	var rec Recorded
	for n := 0; ; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return clock, ctx.Err()
		}
		err := r.Read(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return clock, fmt.Errorf("%s: %w", path, err)
		}
		if !clock.HasStart {
			clock.Start, clock.HasStart = int64(rec.TS), true
			if rec.Wall != 0 {
				clock.WallOffset, clock.HasWall = int64(rec.TS)-rec.Wall, true
			}
			if len(marks) == 0 {
				break
			}
		}
		if rec.Name == markerEvent {
			for _, v := range rec.Values {
				if v.Field != nil && v.Field.Name == "text" {
					names = append(names, string(v.Bytes))
					times = append(times, int64(rec.TS))
				}
			}
		}
	}
	clock.Marker = func(name string) (int64, bool) {
		if i := timerange.MatchMarker(names, name); i >= 0 {
			return times[i], true
		}
		return 0, false
	}
	return clock, nil
}

// KeepWindow returns keep restricted to the events of the perf.data
// file at path inside spec (PerfDataWindow); keep itself when spec is
// unset, nil keeps all.
func KeepWindow(ctx context.Context, path string, spec timerange.Spec, keep func(*Recorded) bool) (func(*Recorded) bool, error) {
	if !spec.Set() {
		return keep, nil
	}
	win, err := PerfDataWindow(ctx, path, spec)
	if err != nil {
		return nil, err
	}
	return func(r *Recorded) bool {
		return win.Contains(int64(r.TS)) && (keep == nil || keep(r))
	}, nil
}
