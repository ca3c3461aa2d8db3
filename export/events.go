package export

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// eventJSON is a user_event record of iotap events record --json
// (docs/ndjson.md, userevents.AppendNDJSON), or a line of the shape before
// schema 1 (ts, and pid for the task id).
type eventJSON struct {
	Kind   string          `json:"kind"`
	Name   string          `json:"name"`
	System string          `json:"system"`
	TSNS   *uint64         `json:"ts_ns"`
	TS     *uint64         `json:"ts"`
	WallNS *int64          `json:"wall_ns"`
	CPU    int32           `json:"cpu"`
	TID    *int32          `json:"tid"`
	PID    *int32          `json:"pid"`
	Fields json.RawMessage `json:"fields"`
}

// maxSortedEvents bounds the user events sorted by time in memory; a
// longer input is written in sorted runs of this many rows.
var maxSortedEvents = 1 << 18 // a variable for the tests

// eventRun holds the events of a sorted run in a compact form until they
// are written: a row without the identity (the same for every row of an
// input) and without its maps, its fields in one list shared by the run,
// text interned per run. A full run costs about 120 bytes per event of
// four fields, a UserEventRow with its maps about 500 (peak RSS of 'iotap
// export' on 368 k events: docs/performance.md).
type eventRun struct {
	events []pendingEvent
	fields []pendingField
	text   []string         // names, systems and field keys (interned), string values
	index  map[string]int32 // text's indexes
}

// pendingEvent is one event of a run.
type pendingEvent struct {
	line, ts, wall int64
	system, name   int32 // in text
	cpu, tid, pid  int32
	fields         int32 // its fields are fields[fields:next event's fields]
	hasWall        bool
	hasPID         bool
}

// pendingField is one field: its key in text, its kind, and its value
// (an int64's or uint64's bits, or the value's index in text).
type pendingField struct {
	key  int32
	kind uint8 // fieldInt, fieldUint, fieldStr
	v    uint64
}

const (
	fieldInt = iota
	fieldUint
	fieldStr
)

func (r *eventRun) intern(s string) int32 {
	if i, ok := r.index[s]; ok {
		return i
	}
	if r.index == nil {
		r.index = map[string]int32{}
	}
	i := int32(len(r.text))
	r.text = append(r.text, s)
	r.index[s] = i
	return i
}

// add appends a string value, not interned: values seldom repeat.
func (r *eventRun) add(s string) uint64 {
	r.text = append(r.text, s)
	return uint64(len(r.text) - 1)
}

func (r *eventRun) reset() {
	r.events, r.fields = r.events[:0], r.fields[:0]
	clear(r.text)
	r.text = r.text[:0]
	clear(r.index)
}

// row fills u with event i of the run.
func (r *eventRun) row(u *UserEventRow, i int, id Identity) {
	e := &r.events[i]
	*u = UserEventRow{Identity: id, Line: e.line, TSNS: e.ts, System: r.text[e.system], Name: r.text[e.name], CPU: e.cpu, TID: e.tid}
	if e.hasWall {
		u.WallNS = ptr(e.wall)
	}
	if e.hasPID {
		u.PID = ptr(e.pid)
	}
	end := int32(len(r.fields))
	if i+1 < len(r.events) {
		end = r.events[i+1].fields
	}
	for _, f := range r.fields[e.fields:end] {
		k := r.text[f.key]
		switch f.kind {
		case fieldInt:
			setMap(&u.IntFields, k, int64(f.v))
		case fieldUint:
			setMap(&u.UintFields, k, f.v)
		default:
			setMap(&u.StrFields, k, r.text[f.v])
		}
	}
}

// exportEvents reads user_events NDJSON into user_events.
func (x *Exporter) exportEvents(ctx context.Context, c *capture, path string, r io.Reader, row *CaptureRow) error {
	row.Source, row.Format, row.ClockDomain = "events", "ndjson", "trace-local"
	id := c.id
	id.SourceFile, id.ClockDomain = path, row.ClockDomain
	out := &lazyTable[UserEventRow]{x: x, name: TableUserEvents, c: c, src: path}
	var run eventRun
	var order []int32
	flush := func() error {
		// The events in time order, those of equal times in input order.
		order = order[:0]
		for i := range run.events {
			order = append(order, int32(i))
		}
		slices.SortStableFunc(order, func(a, b int32) int {
			return cmp.Compare(run.events[a].ts, run.events[b].ts)
		})
		for _, i := range order {
			p, err := out.next()
			if err != nil {
				return err
			}
			run.row(p, int(i), id)
		}
		run.reset()
		return nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var line int64
	var readErr error
	for sc.Scan() {
		line++
		if line&4095 == 0 {
			if err := ctx.Err(); err != nil {
				out.abort()
				return err
			}
		}
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var e eventJSON
		err := json.Unmarshal(b, &e)
		if err == nil {
			switch e.Kind {
			case "":
				e.TID, e.PID = e.PID, nil // before schema 1, "pid" was the task id
			case "user_event":
				e.TS = e.TSNS
			default:
				continue // the input record, or a kind this reader does not know
			}
		}
		if err == nil && (e.Name == "" || e.TS == nil) {
			err = fmt.Errorf("no name or ts_ns")
		}
		if err == nil && *e.TS > math.MaxInt64 {
			err = fmt.Errorf("ts %d out of range", *e.TS)
		}
		nf := len(run.fields)
		if err == nil {
			err = run.decodeFields(e.Fields)
		}
		if err != nil {
			run.fields = run.fields[:nf]
			err = fmt.Errorf("%s: line %d: not a user_events record: %v", path, line, err)
			if x.opt.KeepGoing {
				row.SkippedLines++
				continue
			}
			readErr = err
			break
		}
		if e.System == "" {
			e.System = "user_events"
		}
		ev := pendingEvent{line: line, ts: int64(*e.TS), system: run.intern(e.System), name: run.intern(e.Name), cpu: e.CPU, fields: int32(nf)}
		if e.TID != nil {
			ev.tid = *e.TID
		}
		if e.WallNS != nil {
			ev.wall, ev.hasWall = *e.WallNS, true
		}
		if e.PID != nil {
			ev.pid, ev.hasPID = *e.PID, true
		}
		if row.FirstTSNS == nil || ev.ts < *row.FirstTSNS {
			row.FirstTSNS = ptr(ev.ts)
		}
		if row.LastTSNS == nil || ev.ts > *row.LastTSNS {
			row.LastTSNS = ptr(ev.ts)
		}
		row.Records++
		run.events = append(run.events, ev)
		if len(run.events) >= maxSortedEvents {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil && readErr == nil {
		readErr = fmt.Errorf("%s: line %d: %w", path, line+1, err)
	}
	if err := flush(); err != nil {
		return err
	}
	if readErr != nil {
		row.Complete = false
		row.Loss = "stopped at a decoding error: " + readErr.Error()
	} else if row.SkippedLines > 0 {
		row.Loss = fmt.Sprintf("%d unreadable lines skipped", row.SkippedLines)
	}
	return out.commit()
}

// decodeFields adds the fields of an event to the run, typed as the
// maps of UserEventRow hold them.
func (r *eventRun) decodeFields(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("fields: %v", err)
	}
	for k, v := range m {
		f := pendingField{key: r.intern(k), kind: fieldStr}
		switch v := v.(type) {
		case json.Number:
			if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				f.kind, f.v = fieldInt, uint64(i)
			} else if n, err := strconv.ParseUint(string(v), 10, 64); err == nil {
				f.kind, f.v = fieldUint, n
			} else {
				f.v = r.add(string(v))
			}
		case string:
			f.v = r.add(v)
		default:
			b, _ := json.Marshal(v)
			f.v = r.add(string(b))
		}
		r.fields = append(r.fields, f)
	}
	return nil
}

func setMap[V any](m *map[string]V, k string, v V) {
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[k] = v
}
