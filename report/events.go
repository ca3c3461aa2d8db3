package report

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/iotap/iotap/userevents"
)

// Events is the summary of user_events records ('iotap events record
// --json' NDJSON).
type Events struct {
	Total int64
	// ByName holds per event its count, rate over time and the numeric
	// fields' values over time, sorted by name.
	ByName []*Event
}

// Event is what the report keeps of one user event.
type Event struct {
	Name  string
	Count int64
	Rate  Series
	// Fields holds the numeric fields' values over time, sorted by name,
	// for the first MaxEventFields fields met.
	Fields []*EventField
}

// EventField is one numeric field of an event over time.
type EventField struct {
	Name   string
	Values ValueSeries
}

// MaxEventFields bounds the fields plotted per event.
const MaxEventFields = 8

// AnalyzeEvents counts user_events records per event name and keeps their
// rates and numeric field values over time.
func AnalyzeEvents(ctx context.Context, r io.Reader) (*Events, *Span, error) {
	byName := map[string]*Event{}
	fields := map[*Event]map[string]*EventField{}
	span := &Span{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	var total int64
	for sc.Scan() {
		line++
		if line&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		// A user_event record (docs/ndjson.md), or a line of the shape
		// before schema 1 (ts).
		var rec struct {
			Kind   string                     `json:"kind"`
			Name   string                     `json:"name"`
			TSNS   *int64                     `json:"ts_ns"`
			TS     int64                      `json:"ts"`
			Fields map[string]json.RawMessage `json:"fields"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, nil, fmt.Errorf("line %d: not a user_events record", line)
		}
		switch rec.Kind {
		case "":
		case "user_event":
			if rec.TSNS == nil {
				return nil, nil, fmt.Errorf("line %d: user_event without ts_ns", line)
			}
			rec.TS = *rec.TSNS
		default:
			continue // the input record, or a kind this reader does not know
		}
		if rec.Name == "" {
			return nil, nil, fmt.Errorf("line %d: not a user_events record", line)
		}
		span.add(rec.TS)
		total++
		e := byName[rec.Name]
		if e == nil {
			e = &Event{Name: rec.Name}
			byName[rec.Name] = e
			fields[e] = map[string]*EventField{}
		}
		e.Count++
		e.Rate.Add(rec.TS, 1)
		for k, raw := range rec.Fields {
			var v uint64
			if json.Unmarshal(raw, &v) != nil {
				continue // only unsigned integer fields are plotted
			}
			f := fields[e][k]
			if f == nil {
				if len(fields[e]) >= MaxEventFields {
					continue
				}
				f = &EventField{Name: k}
				fields[e][k] = f
			}
			f.Values.Add(rec.TS, v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	ev := &Events{Total: total}
	for _, e := range byName {
		for _, f := range fields[e] {
			e.Fields = append(e.Fields, f)
		}
		sort.Slice(e.Fields, func(i, j int) bool { return e.Fields[i].Name < e.Fields[j].Name })
		ev.ByName = append(ev.ByName, e)
	}
	sort.Slice(ev.ByName, func(i, j int) bool { return ev.ByName[i].Name < ev.ByName[j].Name })
	return ev, span, nil
}

// analyzeEventsFile analyzes the user_events file at path: NDJSON, or a
// perf.data of tracepoints (format "perf.data") read as 'iotap events
// read --json' reads it, whose lost and undecodable samples are the loss.
func analyzeEventsFile(ctx context.Context, path, format string) (*Events, *Span, string, error) {
	if format == "perf.data" {
		p, err := userevents.OpenNDJSON(ctx, path)
		if err != nil {
			return nil, nil, "", err
		}
		ev, sp, err := AnalyzeEvents(ctx, p)
		if cerr := p.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			return nil, nil, "", err
		}
		return ev, sp, p.Stats().Loss(), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, "", err
	}
	defer f.Close()
	ev, sp, err := AnalyzeEvents(ctx, f)
	return ev, sp, "", err
}

// WriteEventsText prints the count of events per name.
func WriteEventsText(w io.Writer, ev *Events) {
	fmt.Fprintf(w, "%d events\n", ev.Total)
	for _, e := range ev.ByName {
		fmt.Fprintf(w, "  %-32s %d\n", e.Name, e.Count)
	}
}
