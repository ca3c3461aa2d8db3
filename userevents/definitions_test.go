package userevents

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/iotap/iotap/tracefs"
)

// fakeTracefs is a tracefs directory with the lab kernel's status and
// formats (testdata): iotap_lab_en and iotap_lab_pg registered, ftrace
// using the first; "gone" registered without a format file.
func fakeTracefs(t *testing.T) *tracefs.FS {
	t.Helper()
	dir := t.TempDir()
	write := func(data []byte, elems ...string) {
		p := filepath.Join(append([]string{dir}, elems...)...)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write([]byte("iotap_lab_en # Used by ftrace\niotap_lab_pg\ngone\n\nActive: 3\nBusy: 1\n"), "user_events_status")
	for _, n := range []string{"iotap_lab_en", "iotap_lab_pg"} {
		b, err := os.ReadFile("testdata/format_" + n + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		write(b, "events", System, n, "format")
	}
	return tracefs.New(dir)
}

// TestStatusAndDefinitions: 'iotap events status' and 'events list' as
// they print a status file and the formats (the lab kernel's): names,
// users, totals; the fields of each format after the common ones, in
// the registering command's syntax; an event without format marked.
func TestStatusAndDefinitions(t *testing.T) {
	fs := fakeTracefs(t)
	st, err := ReadStatus(fs)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := st.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := "iotap_lab_en                             used by: ftrace\n" +
		"iotap_lab_pg                             used by: -\n" +
		"gone                                     used by: -\n" +
		"active 3, busy 1\n"
	if text.String() != want {
		t.Errorf("status text:\n%s\nwant:\n%s", text.String(), want)
	}
	var recs []map[string]any
	for _, l := range bytes.Split(bytes.TrimSuffix(st.AppendNDJSON(nil), []byte("\n")), []byte("\n")) {
		var r map[string]any
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 3 || recs[0]["name"] != "iotap_lab_en" || recs[0]["kind"] != NDJSONStatus {
		t.Errorf("status NDJSON %v", recs)
	}

	defs, err := ReadDefinitions(fs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range defs {
		got = append(got, defs[i].System+"/"+defs[i].Event.Name+"\t"+defs[i].Command())
	}
	wantDefs := []string{
		"user_events/iotap_lab_en\tiotap_lab_en u32 a; char[16] b; __rel_loc char[] s",
		"user_events/iotap_lab_pg\tiotap_lab_pg u32 a; s16 b; __rel_loc char[] s; char[6] c",
		"user_events/gone\tgone (format unreadable)",
	}
	if len(got) != len(wantDefs) {
		t.Fatalf("definitions %q", got)
	}
	for i := range got {
		if got[i] != wantDefs[i] {
			t.Errorf("definition %d: %q, want %q", i, got[i], wantDefs[i])
		}
	}
	var r struct {
		Kind, System, Name string
		Command            *string
		Fields             []struct{ Name string }
		UsedBy             []string `json:"used_by"`
	}
	if err := json.Unmarshal(defs[0].AppendNDJSON(nil), &r); err != nil || r.Kind != NDJSONDefinition || len(r.Fields) != 3 || r.UsedBy[0] != "ftrace" {
		t.Errorf("definition NDJSON %+v, %v", r, err)
	}
	if err := json.Unmarshal(defs[2].AppendNDJSON(nil), &r); err != nil || r.Command != nil {
		t.Errorf("without format: %+v, %v", r, err)
	}
}
