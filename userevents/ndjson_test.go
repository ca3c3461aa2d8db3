package userevents

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/iotap/iotap/internal/golden"
)

// ndjsonRecord is a Recorded with one field of each kind: a signed and an
// unsigned integer, text, and bytes that are not text; names and text
// that need escaping.
func ndjsonRecord(name, field, text string, raw []byte, i int64, u uint64) *Recorded {
	fs := []*FormatField{
		{Name: "n", Kind: KindInt},
		{Name: field, Kind: KindUint},
		{Name: "s", String: true},
		{Name: "raw"},
	}
	return &Recorded{System: System, Name: name, TS: 5182546511, CPU: 1, PID: 103,
		Values: []Value{{Field: fs[0], Int: i}, {Field: fs[1], Uint: u}, {Field: fs[2], Bytes: []byte(text)}, {Field: fs[3], Bytes: raw}}}
}

// TestNDJSONGolden pins the input and user_event records byte for byte
// (IOTAP_UPDATE_GOLDEN=1 rewrites the file): a tracefs event, one from
// perf.data (pid and wall clock known), and the first EventHeader events
// of LinuxTracepoints' perf.data (fields as perf-decode formats them).
func TestNDJSONGolden(t *testing.T) {
	b := AppendNDJSONInput(nil, "", FormatTracefs, ClockTrace)
	b = AppendNDJSON(b, ndjsonRecord("app_req", "big", "say \"hi\"\n", []byte{0, 0xff}, -7, 1<<64-1))
	r := ndjsonRecord("x", "\x01k\"", "\xff", nil, 0, 0)
	r.System, r.Wall, r.Process, r.Thread, r.HasProcess = "other", 1711586712640913120, 2002, 2004, true
	b = AppendNDJSON(b, r)
	eh := 0
	eachSample(t, filepath.Join("testdata", "linuxtracepoints", "perf.data"), func(rec *Recorded) {
		if rec.EventHeader != nil && eh < 6 {
			eh++
			b = AppendNDJSON(b, rec)
		}
	})
	golden.Check(t, "user-event.ndjson", b)
}

// TestNDJSONNoAllocs: a record allocates nothing once the buffer has
// grown.
func TestNDJSONNoAllocs(t *testing.T) {
	r := ndjsonRecord("app_req", "big", "hello", []byte{1, 2}, -7, 9)
	b := make([]byte, 0, 1<<12)
	if n := testing.AllocsPerRun(1000, func() { b = AppendNDJSON(b[:0], r) }); n != 0 {
		t.Errorf("%v allocations per record", n)
	}
}

// FuzzNDJSON: every user_event record is one line that encoding/json
// parses, and every value reads back as the event's.
func FuzzNDJSON(f *testing.F) {
	f.Add("app_req", "user_events", "big", "hello", []byte{1, 2}, int64(-7), uint64(1<<64-1), uint64(100), int64(0), int32(0), int32(0), int32(42), false)
	f.Add("\xff\"", "", "\x00", "\x7f\\", []byte{}, int64(1<<63-1), uint64(0), uint64(1<<64-1), int64(-1), int32(1), int32(-5), int32(0), true)
	f.Add("idle", "sched", "x", "", []byte{}, int64(0), uint64(0), uint64(5), int64(0), int32(0), int32(0), int32(0), true)
	f.Fuzz(func(t *testing.T, name, system, field, text string, raw []byte, i int64, u, ts uint64, wall int64, process, thread, pid int32, hasProcess bool) {
		r := ndjsonRecord(name, field, text, raw, i, u)
		r.System, r.TS, r.Wall, r.Process, r.Thread, r.PID, r.HasProcess = system, ts, wall, process, thread, pid, hasProcess
		line := AppendNDJSON(nil, r)
		if bytes.IndexByte(line, '\n') != len(line)-1 {
			t.Fatalf("not one line: %q", line)
		}
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		str := func(s string) string { // what encoding/json carries for s (invalid UTF-8: U+FFFD)
			j, _ := json.Marshal(s)
			var w string
			json.Unmarshal(j, &w)
			return w
		}
		num := func(v any) string {
			n, _ := v.(json.Number)
			return n.String()
		}
		wantSys := system
		if wantSys == "" {
			wantSys = System
		}
		wantTID := pid
		if thread != 0 {
			wantTID = thread
		}
		if m["kind"] != NDJSONEvent || num(m["ts_ns"]) != strconv.FormatUint(ts, 10) || num(m["cpu"]) != "1" ||
			num(m["tid"]) != strconv.Itoa(int(wantTID)) || m["system"] != str(wantSys) || m["name"] != str(name) {
			t.Fatalf("%s: want %+v", line, r)
		}
		if (wall == 0) != (m["wall_ns"] == nil) || (wall != 0 && num(m["wall_ns"]) != strconv.FormatInt(wall, 10)) {
			t.Fatalf("%s: wall_ns, want %d", line, wall)
		}
		if hasProcess != (m["pid"] != nil) || (m["pid"] != nil && num(m["pid"]) != strconv.Itoa(int(process))) { // pid 0 is the idle task: 0, not null
			t.Fatalf("%s: pid, want %d", line, process)
		}
		fields, _ := m["fields"].(map[string]any)
		want := map[string]string{"n": strconv.FormatInt(i, 10), str(field): strconv.FormatUint(u, 10), "s": str(text), "raw": hex.EncodeToString(raw)}
		if str(field) == "n" || str(field) == "s" || str(field) == "raw" {
			return // a duplicate key: the later value wins in encoding/json
		}
		if len(fields) != 4 {
			t.Fatalf("%s: %d fields", line, len(fields))
		}
		for k, v := range want {
			got, ok := fields[k].(string)
			if !ok {
				got = num(fields[k])
			}
			if got != v {
				t.Fatalf("%s: field %q = %v, want %s", line, k, fields[k], v)
			}
		}
	})
}

// TestStatusNDJSONGolden pins the records of 'events status --json' and
// 'events list --json' for a user_events_status as the kernel writes it
// (IOTAP_UPDATE_GOLDEN=1 rewrites the file), and reads them back: the
// names, who uses them and the fields of the registering command.
func TestStatusNDJSONGolden(t *testing.T) {
	st, err := ParseStatus([]byte("iotap_req # Used by ftrace perf\nmulti.1f\n\nActive: 2\nBusy: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseCommand("iotap_req u32 id; char[16] path; __rel_loc char[] msg")
	if err != nil {
		t.Fatal(err)
	}
	b := AppendNDJSONInput(nil, "", FormatStatus, "")
	for i := range st.Events {
		b = AppendStatusNDJSON(b, &st.Events[i])
	}
	b = AppendDefinitionNDJSON(b, System, &st.Events[0], s)
	b = AppendDefinitionNDJSON(b, MultiSystem, &st.Events[1], nil)
	golden.Check(t, "user-event-status.ndjson", b)
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	var def struct {
		Kind, System, Name string
		Command            *string
		Fields             []struct {
			Name, Type   string
			Offset, Size int
		}
		UsedBy []string `json:"used_by"`
	}
	if err := json.Unmarshal(lines[3], &def); err != nil {
		t.Fatal(err)
	}
	if def.Kind != NDJSONDefinition || def.Name != "iotap_req" || def.Command == nil || *def.Command != s.Command() ||
		len(def.Fields) != 3 || def.Fields[1].Name != "path" || def.Fields[1].Size != 16 || len(def.UsedBy) != 2 {
		t.Errorf("%s", lines[3])
	}
	def.Command = nil
	if err := json.Unmarshal(lines[4], &def); err != nil || def.Command != nil || def.Name != "multi.1f" || def.System != MultiSystem {
		t.Errorf("%s: %v", lines[4], err)
	}
}

// FuzzStatusNDJSON: the status record of any name and users is one line
// that encoding/json parses back to them.
func FuzzStatusNDJSON(f *testing.F) {
	f.Add("iotap_req", "ftrace", "perf")
	f.Add("\xff\"x", "", "\n")
	f.Fuzz(func(t *testing.T, name, u1, u2 string) {
		ev := StatusEvent{Name: name, UsedBy: []string{u1, u2}}
		for _, line := range [][]byte{AppendStatusNDJSON(nil, &ev), AppendDefinitionNDJSON(nil, name, &ev, nil)} {
			if bytes.IndexByte(line, '\n') != len(line)-1 {
				t.Fatalf("not one line: %q", line)
			}
			var r struct {
				Name   string
				UsedBy []string `json:"used_by"`
			}
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			text := func(s string) string {
				j, _ := json.Marshal(s)
				var w string
				json.Unmarshal(j, &w)
				return w
			}
			if r.Name != text(name) || len(r.UsedBy) != 2 || r.UsedBy[0] != text(u1) || r.UsedBy[1] != text(u2) {
				t.Fatalf("%s: want %q %q %q", line, name, u1, u2)
			}
		}
	})
}
