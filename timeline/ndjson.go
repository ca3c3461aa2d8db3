package timeline

import (
	"strings"

	"github.com/iotap/iotap/internal/ndjson"
)

// Record kinds of 'iotap timeline --json' (docs/ndjson.md).
const (
	NDJSONInput   = "timeline_input"   // what was read of one input and where it lies on the timeline
	NDJSONWindow  = "timeline_window"  // one detail file of a split timeline
	NDJSONSummary = "timeline_summary" // the whole timeline, last
)

// ClockName names the clock of in's own times with the names of the
// "input" record of docs/ndjson.md: "realtime", "usbmon_text", "trace",
// "perf", or "" (null) for PT times in TSC ticks.
func ClockName(in *InputStats) string {
	switch in.Kind {
	case KindUSB:
		if strings.Contains(in.Format, "1u") || strings.Contains(in.Format, "1t") || strings.Contains(in.Format, "text") {
			return "usbmon_text"
		}
		return "realtime"
	case KindMMIO:
		return "trace"
	case KindEvents:
		if strings.Contains(in.Clock, "perf") {
			return "perf"
		}
		return "trace"
	case KindPT:
		if strings.HasPrefix(in.Clock, "perf time") {
			return "perf"
		}
	}
	return ""
}

// AppendNDJSON appends 'iotap timeline --json' for s (docs/ndjson.md): an
// "input" record per input (its source: usb, mmio, events, pt), then per input a timeline_input record (its
// offset onto the timeline, events, losses, first and last event on the
// timeline, the source's counts), for a split timeline (split non-nil
// with Split) a timeline_window record per detail file, and last a
// timeline_summary record (alignment, markers, warnings, the time window,
// the Perfetto writer's counts, the split).
func (s *Stats) AppendNDJSON(b []byte, split *SplitStats) []byte {
	for _, in := range s.Inputs {
		b = ndjson.End(ndjson.Input(b, string(in.Kind), in.Path, in.Format, ClockName(in)))
	}
	for _, in := range s.Inputs {
		b = appendInputStats(b, in)
	}
	if split != nil && split.Split && split.Index != nil {
		for i := range split.Index.Windows {
			b = appendWindow(b, &split.Index.Windows[i])
		}
	}
	b = ndjson.Begin(b, NDJSONSummary)
	b = ndjson.Int(b, "inputs", int64(len(s.Inputs)))
	b = ndjson.Bool(b, "aligned", s.Aligned)
	b = ndjson.Int(b, "markers", s.Markers)
	b = ndjson.OpenArray(b, "warnings")
	for _, w := range s.Warnings {
		b = ndjson.StrElem(b, w)
	}
	b = ndjson.CloseArray(b)
	b = ndjson.Bool(b, "interrupted", s.Interrupted)
	b = nsOrNull(b, "from_ns", s.Window, true)
	b = nsOrNull(b, "to_ns", s.Window, false)
	w := &s.Writer
	b = ndjson.Open(b, "writer")
	b = ndjson.Int(b, "packets", w.Packets)
	b = ndjson.Int(b, "tracks", w.Tracks)
	b = ndjson.Int(b, "slices", w.Slices)
	b = ndjson.Int(b, "ends", w.Ends)
	b = ndjson.Int(b, "instants", w.Instants)
	b = ndjson.Int(b, "counters", w.Counters)
	b = ndjson.Int(b, "interned", w.Interned)
	b = ndjson.Int(b, "bytes", w.Bytes)
	b = ndjson.Close(b)
	isSplit := split != nil && split.Split && split.Index != nil
	b = ndjson.Bool(b, "split", isSplit)
	if isSplit {
		x := split.Index
		b = ndjson.Str(b, "dir", split.Dir)
		b = ndjson.Int(b, "overview_bytes", split.OverviewBytes)
		b = ndjson.Int(b, "max_size", x.MaxSize)
		b = ndjson.Uint(b, "bucket_ns", x.BucketNS)
	} else {
		for _, k := range []string{"dir", "overview_bytes", "max_size", "bucket_ns"} {
			b = ndjson.Null(b, k)
		}
	}
	return ndjson.End(b)
}

// nsOrNull appends the from (or to) end of window, null when open.
func nsOrNull(b []byte, k string, w *TimeWindow, from bool) []byte {
	var v *int64
	if w != nil {
		v = w.ToNS
		if from {
			v = w.FromNS
		}
	}
	if v == nil {
		return ndjson.Null(b, k)
	}
	return ndjson.Int(b, k, *v)
}

// appendInputStats appends in's timeline_input record.
func appendInputStats(b []byte, in *InputStats) []byte {
	b = ndjson.Begin(b, NDJSONInput)
	b = ndjson.Str(b, "file", in.Path)
	b = ndjson.StrOrNull(b, "stream", in.Stream)
	b = ndjson.Str(b, "clock_detail", in.Clock)
	b = ndjson.Int(b, "offset_ns", in.OffsetNS)
	b = ndjson.Bool(b, "aligned", in.Aligned)
	b = ndjson.Int(b, "events", in.Events)
	b = ndjson.Int(b, "lost", in.Lost)
	b = ndjson.Int(b, "skipped", in.Skipped)
	if in.Events > 0 {
		b = ndjson.Uint(b, "first_ns", in.FirstNS)
		b = ndjson.Uint(b, "last_ns", in.LastNS)
	} else {
		b = ndjson.Null(b, "first_ns")
		b = ndjson.Null(b, "last_ns")
	}
	b = ndjson.Int(b, "markers", in.Markers)
	b = ndjson.Int(b, "warnings", in.Warnings)
	b = ndjson.Bool(b, "truncated", in.Truncated)
	b = ndjson.StrOrNull(b, "truncation", in.Truncation)
	b = ndjson.Int(b, "bytes_read", in.BytesRead)
	b = ndjson.Bool(b, "seeked", in.Seeked)
	switch in.Kind {
	case KindUSB:
		b = ndjson.Int(b, "slices", in.Slices)
		b = ndjson.Int(b, "unmatched", in.Unmatched)
		b = ndjson.Int(b, "orphans", in.Orphans)
		b = ndjson.Int(b, "overflow", in.Overflow)
	case KindMMIO:
		b = ndjson.Int(b, "accesses", in.Accesses)
		b = ndjson.Int(b, "named", in.Named)
	case KindPT:
		b = ndjson.Int(b, "not_timed", in.NotTimed)
		b = ndjson.Int(b, "pt_overflow", in.Dropped)
	}
	return ndjson.End(b)
}

// appendWindow appends w's timeline_window record.
func appendWindow(b []byte, w *Window) []byte {
	b = ndjson.Begin(b, NDJSONWindow)
	b = ndjson.Str(b, "file", w.File)
	b = ndjson.Uint(b, "start_ns", w.StartNS)
	b = ndjson.Uint(b, "end_ns", w.EndNS)
	b = ndjson.Int(b, "bytes", w.Bytes)
	b = ndjson.Int(b, "events", w.Events)
	b = ndjson.OpenArray(b, "events_per_input")
	for _, n := range w.PerInput {
		b = ndjson.IntElem(b, n)
	}
	b = ndjson.CloseArray(b)
	b = ndjson.Uint(b, "lost", w.Lost)
	b = ndjson.OpenArray(b, "top")
	for _, a := range w.Top {
		b = ndjson.OpenElem(b)
		b = appendActivity(b, &a)
		b = ndjson.Close(b)
	}
	b = ndjson.CloseArray(b)
	return ndjson.End(b)
}

// appendActivity appends the members of a busy track of a window.
func appendActivity(b []byte, a *Activity) []byte {
	b = ndjson.Str(b, "input", a.Input)
	b = ndjson.Str(b, "track", a.Track)
	return ndjson.Uint(b, "events", a.Events)
}
