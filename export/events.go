package export

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/iotap/iotap/internal/timerange"
	"github.com/iotap/iotap/userevents"
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
// input) and without its maps. An event's system, name and field keys
// and kinds are its shape, kept once per run for all the events that
// share it (an event type's every record, as a tracepoint's format
// fixes them); its field values are 8 bytes each in one list shared by
// the run, a string value an index into the run's text. A full run
// costs about 84 bytes per event of four integer fields (48 for the
// event, 32 for its values, 4 to sort it), a UserEventRow with its maps
// about 500 (docs/performance.md, memory table).
type eventRun struct {
	events []pendingEvent
	vals   []uint64 // field values: an int64's or uint64's bits, or an index in text
	text   []string // string values
	shapes []eventShape
	index  map[string]int32 // shapes by shapeKey
	// scratch of decode
	m     map[string]any
	keys  []string
	kinds []uint8
	key   []byte
}

// eventShape is what events of one type share: system, name, and the
// keys of their fields (sorted) with the kind of each value.
type eventShape struct {
	system, name string
	keys         []string
	kinds        []uint8 // fieldInt, fieldUint, fieldStr
}

// pendingEvent is one event of a run.
type pendingEvent struct {
	line, ts, wall int64
	shape          int32 // in shapes
	cpu, tid, pid  int32
	vals           int32 // its values are vals[vals:vals+len(its shape's keys)]
	hasWall        bool
	hasPID         bool
}

const (
	fieldInt = iota
	fieldUint
	fieldStr
)

// add appends a string value, not interned: values seldom repeat.
func (r *eventRun) add(s string) uint64 {
	r.text = append(r.text, s)
	return uint64(len(r.text) - 1)
}

func (r *eventRun) reset() {
	r.events, r.vals = r.events[:0], r.vals[:0]
	clear(r.text)
	r.text = r.text[:0]
	clear(r.shapes)
	r.shapes = r.shapes[:0]
	clear(r.index)
}

// row fills u with event i of the run.
func (r *eventRun) row(u *UserEventRow, i int, id Identity) {
	e := &r.events[i]
	sh := &r.shapes[e.shape]
	*u = UserEventRow{Identity: id, Line: e.line, TSNS: e.ts, System: sh.system, Name: sh.name, CPU: e.cpu, TID: e.tid}
	if e.hasWall {
		u.WallNS = ptr(e.wall)
	}
	if e.hasPID {
		u.PID = ptr(e.pid)
	}
	for j, k := range sh.keys {
		v := r.vals[int(e.vals)+j]
		switch sh.kinds[j] {
		case fieldInt:
			setMap(&u.IntFields, k, int64(v))
		case fieldUint:
			setMap(&u.UintFields, k, v)
		default:
			setMap(&u.StrFields, k, r.text[v])
		}
	}
}

// exportEvents reads user_events NDJSON into user_events; row.Format and
// row.ClockDomain, when set, say where the NDJSON came from (a perf.data's
// samples, exportPerfDataEvents), else "ndjson" on the trace clock.
func (x *Exporter) exportEvents(ctx context.Context, c *capture, path string, r io.Reader, row *CaptureRow) error {
	row.Source = "events"
	if row.Format == "" {
		row.Format, row.ClockDomain = "ndjson", "trace-local"
	}
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
		if e.System == "" {
			e.System = "user_events"
		}
		nv, nt := len(run.vals), len(run.text)
		var shape int32
		if err == nil {
			shape, err = run.decode(e.System, e.Name, e.Fields)
		}
		if err != nil {
			run.vals, run.text = run.vals[:nv], run.text[:nt]
			err = fmt.Errorf("%s: line %d: not a user_events record: %v", path, line, err)
			if x.opt.KeepGoing {
				row.SkippedLines++
				continue
			}
			readErr = err
			break
		}
		ev := pendingEvent{line: line, ts: int64(*e.TS), shape: shape, cpu: e.CPU, vals: int32(nv)}
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

// decode adds the field values of an event to the run and returns the
// index of its shape (system, name, and the fields' keys and kinds),
// typed as the maps of UserEventRow hold them.
func (r *eventRun) decode(system, name string, raw json.RawMessage) (int32, error) {
	r.keys, r.kinds = r.keys[:0], r.kinds[:0]
	if len(raw) != 0 && string(raw) != "null" {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		clear(r.m)
		if err := dec.Decode(&r.m); err != nil {
			return 0, fmt.Errorf("fields: %v", err)
		}
		for k := range r.m {
			r.keys = append(r.keys, k)
		}
		slices.Sort(r.keys)
		for _, k := range r.keys {
			kind, v := uint8(fieldStr), uint64(0)
			switch v0 := r.m[k].(type) {
			case json.Number:
				if i, err := strconv.ParseInt(string(v0), 10, 64); err == nil {
					kind, v = fieldInt, uint64(i)
				} else if n, err := strconv.ParseUint(string(v0), 10, 64); err == nil {
					kind, v = fieldUint, n
				} else {
					v = r.add(string(v0))
				}
			case string:
				v = r.add(v0)
			default:
				b, _ := json.Marshal(v0)
				v = r.add(string(b))
			}
			r.kinds = append(r.kinds, kind)
			r.vals = append(r.vals, v)
		}
	}
	// The shape's key: each text length-prefixed, each field's kind
	// before its key.
	b := binary.AppendUvarint(r.key[:0], uint64(len(system)))
	b = append(b, system...)
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	for i, k := range r.keys {
		b = append(b, r.kinds[i])
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
	}
	r.key = b
	if i, ok := r.index[string(b)]; ok {
		return i, nil
	}
	if r.index == nil {
		r.index = map[string]int32{}
	}
	i := int32(len(r.shapes))
	r.shapes = append(r.shapes, eventShape{system: system, name: name, keys: slices.Clone(r.keys), kinds: slices.Clone(r.kinds)})
	r.index[string(b)] = i
	return i, nil
}

func setMap[V any](m *map[string]V, k string, v V) {
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[k] = v
}

// exportPerfDataEvents exports the samples of a perf.data of tracepoints
// (user_events; detect.PerfDataKind) at path, in spec's window when set,
// as 'iotap events read --json' reads them (userevents.ReadJob), through
// exportEvents: the samples the kernel lost and those that did not
// decode are the row's loss.
func (x *Exporter) exportPerfDataEvents(ctx context.Context, c *capture, path string, spec timerange.Spec, row *CaptureRow) error {
	job := userevents.ReadJob{Path: path, JSON: true, Window: spec}
	if err := job.Prepare(ctx); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	r, err := job.Open()
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer r.Close()
	row.Format, row.ClockDomain = "perf.data", "perf" // the samples' clock (ts_ns)
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := job.Run(ctx, r, pw)
		pw.CloseWithError(err)
	}()
	err = x.exportEvents(ctx, c, path, pr, row)
	pr.Close() // ends Run if exportEvents stopped first
	<-done
	if err != nil {
		return err
	}
	st := r.Stats()
	if l := st.Loss(); l != "" {
		row.LostEvents += int64(st.Lost)
		row.Complete = false
		if row.Loss != "" {
			l = row.Loss + "; " + l
		}
		row.Loss = l
	}
	return nil
}
