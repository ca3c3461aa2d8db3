package timeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/iotap/iotap/userevents"
)

// MarkerEvent is the name of the user event that iotap treats as a
// marker: its "text" field is shown on every source's track.
const MarkerEvent = "iotap_marker"

// eventsSource draws user_events records (iotap events record --json):
// one track per event name, every record an instant with its fields as
// arguments.
type eventsSource struct {
	closer io.Closer
	sc     *bufio.Scanner
	in     *InputStats
	line   int64

	rec    eventRecord
	tracks map[string]uint64
	args   []Arg
	ov     map[string]*ovSeries
	perf   *userevents.NDJSONPipe // a perf.data's samples (openPerfDataEvents)
}

// eventRecord is a user_event record (docs/ndjson.md), or a line of the
// shape before schema 1 (ts, and pid for the task id).
type eventRecord struct {
	Kind   string          `json:"kind"`
	Name   string          `json:"name"`
	System string          `json:"system"`
	TSNS   *uint64         `json:"ts_ns"`
	TS     *uint64         `json:"ts"`
	CPU    int64           `json:"cpu"`
	TID    *int64          `json:"tid"`
	PID    *int64          `json:"pid"`
	Fields json.RawMessage `json:"fields"`
}

// normalize makes a record of either shape the schema 1 one: TS is the
// time, TID the task id, PID the process (nil when unknown), System ""
// for user_events. It returns false for records of other kinds (the
// "input" record).
func (r *eventRecord) normalize() bool {
	switch r.Kind {
	case "":
		r.TID, r.PID = r.PID, nil // before schema 1, "pid" was the task id
	case "user_event":
		r.TS = r.TSNS
	default:
		return false
	}
	if r.System == "user_events" {
		r.System = ""
	}
	return true
}

// maxEventTracks bounds the tracks made for distinct event names.
const maxEventTracks = 4096

// NewEventsSource adapts a stream of user_event records as NDJSON
// (docs/ndjson.md, as written by 'iotap events record --json' and
// userevents.AppendNDJSON; lines of the shape before schema 1, with ts and
// pid, are read too) to a
// timeline Source named name. Close closes r when it is an io.Closer.
func NewEventsSource(name string, r io.Reader) Source {
	s := newEventsSource(r, &InputStats{Path: name, Kind: KindEvents})
	if c, ok := r.(io.Closer); ok {
		s.closer = c
	}
	return s
}

func openEvents(f io.Closer, br *bufio.Reader, in *InputStats, _ *Options) ([]Source, error) {
	if head, _ := br.Peek(8); userevents.IsPerfData(head) {
		return openPerfDataEvents(f, in)
	}
	s := newEventsSource(br, in)
	s.closer = f
	return []Source{s}, nil
}

// openPerfDataEvents reads a perf.data of tracepoints (user_events;
// detect.Recognise) as 'iotap events read --json' reads it
// (userevents.OpenNDJSON, which opens the file again: a perf.data is
// read by seeking), on the samples' clock; the samples the kernel lost
// and those that did not decode count as lost when the file ends.
func openPerfDataEvents(f io.Closer, in *InputStats) ([]Source, error) {
	of, ok := f.(*os.File)
	regular := false
	if ok && in.Path != "-" {
		st, err := of.Stat()
		regular = err == nil && st.Mode().IsRegular()
	}
	f.Close()
	if !regular {
		// Opened again, a pipe would wait for a writer that is gone.
		return nil, errors.New("file-mode perf.data needs random access: give a regular file, not a pipe or standard input")
	}
	p, err := userevents.OpenNDJSON(context.Background(), in.Path)
	if err != nil {
		return nil, err
	}
	s := newEventsSource(p, in)
	s.closer, s.perf = p, p
	in.Format = "perf.data"
	in.Clock = "perf (the samples' clock, as 'iotap events read' reads it)"
	return []Source{s}, nil
}

func newEventsSource(r io.Reader, in *InputStats) *eventsSource {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	in.Format = "user_events NDJSON"
	in.Clock = "tracefs trace clock ('local' by default: ns since boot)"
	return &eventsSource{sc: sc, in: in, tracks: map[string]uint64{}}
}

func (s *eventsSource) Info() *InputStats { return s.in }
func (s *eventsSource) Close() error      { return closeIf(s.closer) }

func (s *eventsSource) Next() (int64, error) {
	for s.sc.Scan() {
		s.line++
		b := bytes.TrimSpace(s.sc.Bytes())
		if len(b) == 0 {
			continue
		}
		s.rec = eventRecord{}
		err := json.Unmarshal(b, &s.rec)
		if err == nil && !s.rec.normalize() {
			continue // the input record, or a kind this reader does not know
		}
		if err != nil || s.rec.Name == "" || s.rec.TS == nil {
			if err == nil {
				err = errors.New("no name or ts_ns")
			}
			return 0, fmt.Errorf("line %d: not a user_events record: %v", s.line, err)
		}
		if *s.rec.TS > 1<<63-1 {
			return 0, fmt.Errorf("line %d: ts %d out of range", s.line, *s.rec.TS)
		}
		return int64(*s.rec.TS), nil
	}
	if err := s.sc.Err(); err != nil {
		if s.perf != nil {
			return 0, err // names the file and the byte
		}
		return 0, fmt.Errorf("line %d: %w", s.line+1, err)
	}
	if s.perf != nil {
		// The reading ended (EOF follows its end): its counts are final.
		st := s.perf.Stats()
		s.in.Lost, s.in.Skipped = int64(st.Lost), int64(st.Bad)
		s.perf = nil
	}
	return 0, io.EOF
}

func (s *eventsSource) Draw(c *Canvas, ts uint64) {
	r := &s.rec
	a := s.args[:0]
	a = append(a, Int("cpu", r.CPU))
	if r.TID != nil {
		a = append(a, Int("tid", *r.TID))
	}
	if r.PID != nil {
		a = append(a, Int("pid", *r.PID))
	}
	var markerText []byte
	if len(r.Fields) > 0 {
		dec := json.NewDecoder(bytes.NewReader(r.Fields))
		dec.UseNumber()
		if t, err := dec.Token(); err == nil && t == json.Delim('{') {
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					break
				}
				k, _ := kt.(string)
				var v any
				if err := dec.Decode(&v); err != nil {
					break
				}
				switch v := v.(type) {
				case string:
					a = append(a, Str(k, v))
					if k == "text" {
						markerText = []byte(v)
					}
				case json.Number:
					if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
						a = append(a, Int(k, i))
					} else if u, err := strconv.ParseUint(string(v), 10, 64); err == nil {
						a = append(a, Uint(k, u))
					} else if f, err := v.Float64(); err == nil {
						a = append(a, Double(k, f))
					}
				case bool:
					a = append(a, Bool(k, v))
				default:
					raw, _ := json.Marshal(v)
					a = append(a, Bytes(k, raw))
				}
			}
		}
	}
	s.args = a
	if r.Name == MarkerEvent {
		s.in.Markers++
		if markerText == nil {
			markerText = []byte(r.Name)
		}
		c.Marker(ts, "events", markerText)
		return
	}
	track, ok := s.tracks[r.Name]
	if !ok {
		if len(s.tracks) >= maxEventTracks {
			track = c.Top
		} else {
			name := r.Name
			if r.System != "" {
				name = r.System + ":" + name
			}
			track = c.W.Track(c.Top, name, TrackOptions{})
			s.tracks[r.Name] = track
		}
	}
	c.W.Instant(track, ts, "user_events", r.Name, a...)
}

func (s *eventsSource) Flush(*Canvas, uint64)  {}
func (s *eventsSource) Finish(*Canvas, uint64) {}

// overview counts the record in its event name's series.
func (s *eventsSource) overview(oi *ovInput, ts uint64) {
	sr, ok := s.ov[s.rec.Name]
	if !ok {
		if s.ov == nil {
			s.ov = map[string]*ovSeries{}
		}
		name := s.rec.Name
		if s.rec.System != "" {
			name = s.rec.System + ":" + name
		}
		sr = oi.newSeries("", name+" events/s", ovPlain)
		if len(s.ov) < maxOvSeries {
			s.ov[s.rec.Name] = sr
		}
	}
	oi.ov.add(sr, ts, 1)
}
