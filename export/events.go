package export

import (
	"bufio"
	"bytes"
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
const maxSortedEvents = 1 << 18

// exportEvents reads user_events NDJSON into user_events.
func (x *Exporter) exportEvents(ctx context.Context, c *capture, path string, r io.Reader, row *CaptureRow) error {
	row.Source, row.Format, row.ClockDomain = "events", "ndjson", "trace-local"
	id := c.id
	id.SourceFile, id.ClockDomain = path, row.ClockDomain
	out := &lazyTable[UserEventRow]{x: x, name: TableUserEvents, c: c, src: path}
	var pending []UserEventRow
	flush := func() error {
		slices.SortStableFunc(pending, func(a, b UserEventRow) int {
			switch {
			case a.TSNS < b.TSNS:
				return -1
			case a.TSNS > b.TSNS:
				return 1
			}
			return 0
		})
		for i := range pending {
			p, err := out.next()
			if err != nil {
				return err
			}
			*p = pending[i]
		}
		pending = pending[:0]
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
		var u UserEventRow
		if err == nil {
			err = decodeEventFields(&u, e.Fields)
		}
		if err != nil {
			err = fmt.Errorf("%s: line %d: not a user_events record: %v", path, line, err)
			if x.opt.KeepGoing {
				row.SkippedLines++
				continue
			}
			readErr = err
			break
		}
		u.Identity = id
		u.Line, u.TSNS, u.WallNS, u.System, u.Name, u.CPU, u.PID = line, int64(*e.TS), e.WallNS, e.System, e.Name, e.CPU, e.PID
		if e.TID != nil {
			u.TID = *e.TID
		}
		if u.System == "" {
			u.System = "user_events"
		}
		if row.FirstTSNS == nil || u.TSNS < *row.FirstTSNS {
			row.FirstTSNS = ptr(u.TSNS)
		}
		if row.LastTSNS == nil || u.TSNS > *row.LastTSNS {
			row.LastTSNS = ptr(u.TSNS)
		}
		row.Records++
		pending = append(pending, u)
		if len(pending) >= maxSortedEvents {
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

// decodeEventFields sorts the fields of an event into the typed maps.
func decodeEventFields(u *UserEventRow, raw json.RawMessage) error {
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
		switch v := v.(type) {
		case json.Number:
			if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				setMap(&u.IntFields, k, i)
			} else if n, err := strconv.ParseUint(string(v), 10, 64); err == nil {
				setMap(&u.UintFields, k, n)
			} else {
				setMap(&u.StrFields, k, string(v))
			}
		case string:
			setMap(&u.StrFields, k, v)
		default:
			b, _ := json.Marshal(v)
			setMap(&u.StrFields, k, string(b))
		}
	}
	return nil
}

func setMap[V any](m *map[string]V, k string, v V) {
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[k] = v
}
