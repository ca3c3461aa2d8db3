package report

import (
	"github.com/iotap/iotap/internal/ndjson"
	"io"
	"strings"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/usb"
)

// The NDJSON report (docs/ndjson.md): per trace an "input" record (its
// file, format, clock, status and span), then the records of the
// matching stats verb's --json output ('iotap usb stats --json', 'iotap
// mmio stats --json', 'iotap pt stats --json') with the trace's file;
// last a "report" record.

// clockOf names the clock of t's first_ns and last_ns (docs/ndjson.md).
func clockOf(t *Trace) string {
	switch t.Source {
	case "usb":
		if strings.Contains(t.Format, "1u") || strings.Contains(t.Format, "1t") {
			return "usbmon_text"
		}
		return "realtime"
	case "mmio", "events":
		return "trace"
	}
	return ""
}

// appendTrace appends t's "input" record.
func appendTrace(b []byte, t *Trace) []byte {
	b = ndjson.Input(b, t.Source, t.Name, t.Format, clockOf(t))
	status := "ok"
	switch {
	case t.Err != nil:
		status = "error"
	case t.Loss != "":
		status = "loss"
	}
	b = ndjson.Str(b, "status", status)
	b = ndjson.StrOrNull(b, "loss", t.Loss)
	if t.Err != nil {
		b = ndjson.Str(b, "error", t.Err.Error())
	} else {
		b = ndjson.Null(b, "error")
	}
	b = ndjson.Bool(b, "aligned", t.Aligned)
	if t.Span.Set {
		b = ndjson.Int(b, "first_ns", t.Span.FirstNS)
		b = ndjson.Int(b, "last_ns", t.Span.LastNS)
	} else {
		b = ndjson.Null(b, "first_ns")
		b = ndjson.Null(b, "last_ns")
	}
	b = ndjson.Int(b, "offset_ns", t.OffsetNS)
	return ndjson.End(b)
}

// WriteJSON writes the report as NDJSON.
func (r *Report) WriteJSON(w io.Writer) error {
	for _, t := range r.Traces {
		if _, err := w.Write(appendTrace(nil, t)); err != nil {
			return err
		}
		if t.Err != nil {
			continue
		}
		var err error
		switch {
		case t.USB != nil:
			err = t.usbJSON(w)
		case t.MMIO != nil:
			err = t.mmioJSON(w)
		case t.PT != nil:
			err = t.ptJSON(w)
		case t.Events != nil:
			_, err = w.Write(AppendEventsNDJSON(nil, t.Name, t.Events))
		}
		if err != nil {
			return err
		}
	}
	b := ndjson.Begin(nil, "report")
	b = ndjson.Int(b, "traces", int64(len(r.Traces)))
	b = ndjson.Int(b, "lossy", int64(r.Lossy()))
	b = ndjson.Int(b, "errors", int64(r.errors()))
	b = ndjson.OpenArray(b, "not_traces")
	for _, o := range r.Others {
		b = ndjson.Str(ndjson.OpenElem(b), "name", o.Name)
		b = ndjson.Close(ndjson.Str(b, "why", o.Why))
	}
	b = ndjson.CloseArray(b)
	b = ndjson.OpenArray(b, "bundles")
	for i := range r.Bundles {
		b = r.Bundles[i].appendJSON(ndjson.OpenElem(b))
		b = ndjson.Close(b)
	}
	b = ndjson.CloseArray(b)
	_, err := w.Write(ndjson.End(b))
	return err
}

// NDJSONEventStats is the kind of the record of one user event's count in
// report --json (docs/ndjson.md).
const NDJSONEventStats = "user_event_stats"

// AppendEventsNDJSON appends a user_event_stats record per event name of
// ev, each with the input file.
func AppendEventsNDJSON(b []byte, file string, ev *Events) []byte {
	for _, e := range ev.ByName {
		b = ndjson.Begin(b, NDJSONEventStats)
		b = ndjson.Str(b, "file", file)
		b = ndjson.Str(b, "name", e.Name)
		b = ndjson.Int(b, "count", e.Count)
		b = ndjson.End(b)
	}
	return b
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

func (t *Trace) usbJSON(w io.Writer) error {
	u := t.USB
	_, err := w.Write(usb.AppendStatsNDJSON(nil, t.Name, u.Stats, u.Pairs, u.IDs))
	return err
}

func (t *Trace) mmioJSON(w io.Writer) error {
	b := mmiotrace.AppendStatsNDJSON(nil, t.MMIO.Stats, mmiotrace.StatsJSON{File: t.Name, Name: t.MMIO.Name, Top: htmlMaxHotRegs})
	_, err := w.Write(b)
	return err
}

func (t *Trace) ptJSON(w io.Writer) error {
	var b []byte
	for i := range t.PT.Streams {
		st := &t.PT.Streams[i]
		b = intelpt.AppendStatsNDJSON(b, t.Name, st.Name, st.CPU, &st.Stats)
	}
	_, err := w.Write(b)
	return err
}

// appendJSON appends the members of b's object in the "report" record.
func (bu *Bundle) appendJSON(b []byte) []byte {
	b = ndjson.Str(b, "path", bu.Path)
	b = ndjson.OpenArray(b, "members")
	for _, m := range bu.Members {
		b = ndjson.StrElem(b, m)
	}
	return ndjson.CloseArray(b)
}
