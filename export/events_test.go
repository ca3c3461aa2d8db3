package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// TestExportEventsRuns: the user_events rows read back from the Parquet
// file are the input's events, written in sorted runs of maxSortedEvents
// (each run stable-sorted by ts_ns), with every field in the map of its
// type: the expectation is built here from encoding/json's reading of
// each line, not by the exporter's code. Runs of 7 and of the default
// size, times out of order and repeated, fields of every kind (int, an
// integer above int64, a fraction, text, an object, none, a key with a
// NUL; one key's values of two kinds in events of one name), a bad line
// skipped with --keep-going.
func TestExportEventsRuns(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	var in bytes.Buffer
	in.WriteString(`{"kind":"input","schema":1,"source":"events","file":"x.data","format":"perf.data","clock":"perf"}` + "\n")
	for i := 0; i < 100; i++ {
		ts := 1000 + rnd.Intn(40) // repeated times, out of order
		var fields string
		switch i % 7 {
		case 0:
			fields = fmt.Sprintf(`{"fd":%d,"count":-%d,"msg":"m%d"}`, i, i*3, i%4)
		case 1:
			fields = `{"big":18446744073709551615,"frac":1.5,"a\u0000b":1}`
		case 2:
			fields = `{"obj":{"a":[1,2]},"flag":true,"s":"x\ty"}`
		case 3:
			fields = `null`
		case 4:
			fields = `{}`
		case 5: // the default's key, with a text value
			fields = fmt.Sprintf(`{"n%d":"t%d"}`, i%3, i)
		default:
			fields = fmt.Sprintf(`{"n%d":%d}`, i%3, i)
		}
		wall, pid, system := "null", fmt.Sprint(i%5), `"syscalls"`
		if i%4 == 0 {
			wall = strconv.Itoa(1_700_000_000_000_000_000 + i)
			pid = "null"
			system = `""`
		}
		fmt.Fprintf(&in, `{"kind":"user_event","ts_ns":%d,"wall_ns":%s,"cpu":%d,"tid":%d,"pid":%s,"system":%s,"name":"ev%d","fields":%s}`+"\n",
			ts, wall, i%2, 100+i, pid, system, i%3, fields)
		if i == 50 {
			in.WriteString(`{"kind":"user_event","ts_ns":5,"name":"bad","fields":{"a":}}` + "\n")
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "events.ndjson")
	if err := os.WriteFile(path, in.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	// The expectation: each accepted line as encoding/json reads it.
	var want []UserEventRow
	for n, line := range bytes.Split(bytes.TrimSpace(in.Bytes()), []byte("\n")) {
		var e struct {
			Kind   string
			TSNS   int64  `json:"ts_ns"`
			WallNS *int64 `json:"wall_ns"`
			CPU    int32
			TID    int32
			PID    *int32
			System string
			Name   string
			Fields json.RawMessage
		}
		if json.Unmarshal(line, &e) != nil || e.Kind != "user_event" {
			continue
		}
		u := UserEventRow{Line: int64(n + 1), TSNS: e.TSNS, WallNS: e.WallNS, CPU: e.CPU, TID: e.TID, PID: e.PID, System: e.System, Name: e.Name}
		if u.System == "" {
			u.System = "user_events"
		}
		d := json.NewDecoder(bytes.NewReader(e.Fields))
		d.UseNumber()
		var m map[string]any
		d.Decode(&m)
		for k, v := range m {
			switch v := v.(type) {
			case json.Number:
				if i, err := v.Int64(); err == nil {
					setMap(&u.IntFields, k, i)
				} else if x, err := strconv.ParseUint(v.String(), 10, 64); err == nil {
					setMap(&u.UintFields, k, x)
				} else {
					setMap(&u.StrFields, k, v.String())
				}
			case string:
				setMap(&u.StrFields, k, v)
			default:
				b, _ := json.Marshal(v)
				setMap(&u.StrFields, k, string(b))
			}
		}
		want = append(want, u)
	}
	if len(want) != 100 {
		t.Fatalf("%d events expected", len(want))
	}

	defer func(n int) { maxSortedEvents = n }(maxSortedEvents)
	for _, run := range []int{7, maxSortedEvents} {
		maxSortedEvents = run
		x, err := New(Options{Dir: filepath.Join(dir, strconv.Itoa(run)), KeepGoing: true})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := x.ExportPath(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].Records != 100 || rows[0].SkippedLines != 1 {
			t.Fatalf("run %d: captures rows %+v", run, rows)
		}
		b, err := os.ReadFile(x.Files()[0])
		if err != nil {
			t.Fatal(err)
		}
		got, _ := readAll[UserEventRow](t, b)
		exp := slices.Clone(want)
		for i := 0; i < len(exp); i += run {
			part := exp[i:min(i+run, len(exp))]
			slices.SortStableFunc(part, func(a, b UserEventRow) int { return int(a.TSNS - b.TSNS) })
		}
		if len(got) != len(exp) {
			t.Fatalf("run %d: %d rows, want %d", run, len(got), len(exp))
		}
		for i := range got {
			g := got[i]
			g.Identity = Identity{}
			if !reflect.DeepEqual(nilEmpty(g), nilEmpty(exp[i])) {
				t.Fatalf("run %d: row %d:\n got %+v\nwant %+v", run, i, g, exp[i])
			}
		}
		if got[0].SourceFile != path {
			t.Errorf("source_file %q", got[0].SourceFile)
		}
	}
}

// nilEmpty makes empty maps nil: Parquet does not tell an empty map from
// none.
func nilEmpty(u UserEventRow) UserEventRow {
	if len(u.IntFields) == 0 {
		u.IntFields = nil
	}
	if len(u.UintFields) == 0 {
		u.UintFields = nil
	}
	if len(u.StrFields) == 0 {
		u.StrFields = nil
	}
	return u
}
