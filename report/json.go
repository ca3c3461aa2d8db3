package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/usb"
)

// The NDJSON report: one object per line. Every object has "type"; the
// objects of a trace have "trace" (its name) and "source" too, and
// otherwise the fields of the matching stats verb's --json output
// ('iotap usb stats --json', 'iotap mmio stats --json', 'iotap pt stats
// --json'). Lines, in order: per trace a "trace" object, then its
// source's objects; last a "report" object.

// TraceJSON is the "trace" object.
type TraceJSON struct {
	Type     string `json:"type"` // "trace"
	Trace    string `json:"trace"`
	Source   string `json:"source"`
	Format   string `json:"format"`
	Status   string `json:"status"` // "ok", "loss", "error"
	Loss     string `json:"loss,omitempty"`
	Error    string `json:"error,omitempty"`
	Aligned  bool   `json:"aligned"`
	FirstNS  *int64 `json:"first_ns,omitempty"` // on the trace's clock
	LastNS   *int64 `json:"last_ns,omitempty"`
	OffsetNS int64  `json:"offset_ns"` // added to map onto the report's axis
}

// USBStatsJSON is a "device" or "endpoint" object, as 'iotap usb stats
// --json' prints it (usb.StatsRecord), plus type, trace and source.
type USBStatsJSON struct {
	Type   string `json:"type"`
	Trace  string `json:"trace"`
	Source string `json:"source"`
	usb.StatsRecord
}

// WriteJSON writes the report as NDJSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, t := range r.Traces {
		tj := TraceJSON{Type: "trace", Trace: t.Name, Source: t.Source, Format: t.Format, Status: "ok", Loss: t.Loss,
			Aligned: t.Aligned, OffsetNS: t.OffsetNS}
		switch {
		case t.Err != nil:
			tj.Status, tj.Error = "error", t.Err.Error()
		case t.Loss != "":
			tj.Status = "loss"
		}
		if t.Span.Set {
			tj.FirstNS, tj.LastNS = &t.Span.FirstNS, &t.Span.LastNS
		}
		if err := enc.Encode(tj); err != nil {
			return err
		}
		if t.Err != nil {
			continue
		}
		var err error
		switch {
		case t.USB != nil:
			err = t.usbJSON(enc)
		case t.MMIO != nil:
			err = t.mmioJSON(enc)
		case t.PT != nil:
			err = t.ptJSON(enc)
		case t.Events != nil:
			for _, e := range t.Events.ByName {
				if err = enc.Encode(map[string]any{"type": "event", "trace": t.Name, "source": t.Source, "name": e.Name, "count": e.Count}); err != nil {
					break
				}
			}
		}
		if err != nil {
			return err
		}
	}
	others := r.Others
	if others == nil {
		others = []Other{}
	}
	return enc.Encode(map[string]any{"type": "report", "traces": len(r.Traces), "lossy": r.Lossy(), "errors": r.errors(), "not_traces": others, "bundles": r.Bundles})
}

func (r *Report) errors() int {
	n := 0
	for _, t := range r.Traces {
		if t.Err != nil {
			n++
		}
	}
	return n
}

func (t *Trace) usbJSON(enc *json.Encoder) error {
	u := t.USB
	for _, d := range u.Stats.Devices() {
		v, m, p := identityParts(u.IDs, d.Bus, d.Device)
		if err := enc.Encode(USBStatsJSON{"device", t.Name, "usb", usb.DeviceRecord(d, v, m, p)}); err != nil {
			return err
		}
	}
	for _, s := range u.Stats.Endpoints() {
		v, _, _ := identityParts(u.IDs, s.Bus, s.Device)
		if err := enc.Encode(USBStatsJSON{"endpoint", t.Name, "usb", usb.EndpointRecord(s, v)}); err != nil {
			return err
		}
	}
	return enc.Encode(map[string]any{"type": "summary", "trace": t.Name, "source": "usb", "kind": "summary",
		"events": u.Stats.Events(), "untracked_events": u.Stats.Untracked(), "span_us": u.Stats.Span(), "pairing": u.Pairs})
}

func (t *Trace) mmioJSON(enc *json.Encoder) error {
	st, name := t.MMIO.Stats, t.MMIO.Name
	kinds := map[string]int64{}
	for k, n := range st.Kinds {
		if n > 0 {
			kinds[mmiotrace.Kind(k).String()] = n
		}
	}
	base := func(typ string) map[string]any {
		return map[string]any{"type": typ, "trace": t.Name, "source": "mmio"}
	}
	with := func(m map[string]any, kv ...any) map[string]any {
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	if err := enc.Encode(with(base("summary"), "lines", st.Lines, "kinds", kinds, "lost", st.Lost, "skipped", st.Skipped, "polling_loops", st.LoopCount)); err != nil {
		return err
	}
	for _, m := range st.Maps {
		if err := enc.Encode(with(base("map"), "map_id", m.ID, "phys", fmt.Sprintf("0x%x", m.Phys), "len", fmt.Sprintf("0x%x", m.Len), "reads", m.Reads, "writes", m.Writes)); err != nil {
			return err
		}
	}
	for i, r := range st.Regs {
		if i >= htmlMaxHotRegs {
			break
		}
		if err := enc.Encode(with(base("register"), "register", r.Key.String(), "name", name(r.Key), "width", r.Key.Width, "reads", r.Reads, "writes", r.Writes,
			"last_value", fmt.Sprintf("0x%x", r.LastValue), "poll_loops", r.PollLoops, "poll_reads", r.PollReads)); err != nil {
			return err
		}
	}
	for _, l := range st.Loops {
		if err := enc.Encode(with(base("poll"), "register", l.Key.String(), "name", name(l.Key), "width", l.Key.Width, "count", l.Count,
			"first", fmt.Sprintf("0x%x", l.First), "last", fmt.Sprintf("0x%x", l.Last), "what", l.Describe(), "line", l.Line,
			"start", l.StartTime.String(), "end", l.EndTime.String())); err != nil {
			return err
		}
	}
	return nil
}

// PTStreamJSON is the object of 'iotap pt stats --json', plus type,
// trace name and source ("trace" of pt stats is "stream" here).
type PTStreamJSON struct {
	Type   string `json:"type"`
	Trace  string `json:"trace"`
	Source string `json:"source"`
	Stream string `json:"stream"`
	intelpt.StatsRecord
}

func (t *Trace) ptJSON(enc *json.Encoder) error {
	for i := range t.PT.Streams {
		st := &t.PT.Streams[i]
		o := PTStreamJSON{"stream", t.Name, "pt", st.Name, intelpt.NewStatsRecord(&st.Stats, st.CPU)}
		if err := enc.Encode(o); err != nil {
			return err
		}
	}
	return nil
}
