package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// decodeLines decodes every line of out as one JSON object.
func decodeLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d %q: %v", i+1, l, err)
		}
		objs = append(objs, m)
	}
	return objs
}

func TestMMIOStatsJSON(t *testing.T) {
	out, e, code := runMMIO(t, "mmio", "stats", "--json", "--top", "3", mmioGolden)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	objs := decodeLines(t, out)
	types := map[string]int{}
	for _, o := range objs {
		types[o["kind"].(string)]++
	}
	if types["input"] != 1 || types["mmio_summary"] != 1 || types["mmio_map_stats"] != 1 || types["mmio_register"] != 3 || len(objs) != 6+types["mmio_poll"] {
		t.Fatalf("record kinds %v", types)
	}
	if in := objs[0]; in["kind"] != "input" || in["source"] != "mmio" || in["file"] != mmioGolden || in["clock"] != "trace" {
		t.Errorf("input %v", in)
	}
	sum := objs[1]
	kinds := sum["records"].(map[string]any)
	if sum["lines"] != 11957.0 || kinds["W"] != 5388.0 || kinds["R"] != 6558.0 || sum["lost"] != 0.0 {
		t.Errorf("summary %v", sum)
	}
	if m := objs[2]; m["kind"] != "mmio_map_stats" || m["map_id"] != 1.0 || m["phys"] != "0xfebc0000" || m["length"] != 131072.0 || m["reads"] != 6558.0 || m["writes"] != 5388.0 {
		t.Errorf("map %v", m)
	}
	// The hottest register by the human output: EECD, 1611 reads, 5040 writes.
	if r := objs[3]; r["location"] != "0000:00:03.0/0+0x10" || r["bar"] != "0000:00:03.0/0" || r["offset"] != "0x10" || r["register"] != "EECD" ||
		r["reads"] != 1611.0 || r["writes"] != 5040.0 || r["width"] != 4.0 {
		t.Errorf("register %v", r)
	}
}

func TestMMIODiffJSON(t *testing.T) {
	data, _ := os.ReadFile(mmioGolden)
	mod := strings.Replace(string(data), "W 4 8.296099 1 0xfebc0100 0x0 0x0 0\n", "W 4 8.296099 1 0xfebc0100 0x2 0x0 0\nW 4 8.296100 1 0xfebc0104 0x1 0x0 0\n", 1)
	p := filepath.Join(t.TempDir(), "b.log")
	os.WriteFile(p, []byte(mod), 0o600)
	out, e, code := runMMIO(t, "mmio", "diff", "--json", mmioGolden, p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	objs := decodeLines(t, out)
	if len(objs) != 5 || objs[0]["kind"] != "input" || objs[0]["file"] != mmioGolden || objs[1]["kind"] != "input" || objs[1]["file"] != p {
		t.Fatalf("%d objects:\n%s", len(objs), out)
	}
	ch, add, sum := objs[2], objs[3], objs[4]
	if ch["kind"] != "mmio_diff" || ch["op"] != "changed" || ch["access"] != "W" || ch["location"] != "0000:00:03.0/0+0x100" || ch["width"] != 4.0 ||
		ch["a_line"] != 17.0 || ch["b_line"] != 17.0 || ch["a_value"] != "0x0" || ch["b_value"] != "0x2" {
		t.Errorf("changed: %v", ch)
	}
	if _, has := add["a_line"]; add["op"] != "only_b" || has || add["b_line"] != 18.0 || add["b_value"] != "0x1" || add["location"] != "0000:00:03.0/0+0x104" {
		t.Errorf("only_b: %v", add)
	}
	if sum["kind"] != "mmio_diff_summary" || sum["a_accesses"] != 11945.0 || sum["b_accesses"] != 11946.0 || sum["same"] != 11944.0 ||
		sum["changed"] != 1.0 || sum["only_a"] != 0.0 || sum["only_b"] != 1.0 {
		t.Errorf("summary: %v", sum)
	}
	// --all lists the identical accesses too: one object per aligned access.
	out, _, _ = runMMIO(t, "mmio", "diff", "--json", "--all", mmioGolden, p)
	if n := strings.Count(out, `"op":"same"`); n != 11944 {
		t.Errorf("--all: %d same objects", n)
	}
}

func TestMMIOReplayDryRunJSON(t *testing.T) {
	human, _, _ := runMMIO(t, "mmio", "replay", "--dry-run", mmioGolden)
	out, e, code := runMMIO(t, "mmio", "replay", "--dry-run", "--json", mmioGolden)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	objs := decodeLines(t, out)
	hl := strings.Split(strings.TrimSuffix(human, "\n"), "\n")
	if len(objs) != len(hl)+2 || len(hl) != 5388 {
		t.Fatalf("%d objects for %d writes", len(objs), len(hl))
	}
	if in := objs[0]; in["kind"] != "input" || in["source"] != "mmio" || in["file"] != mmioGolden || in["clock"] != "trace" {
		t.Fatalf("first record %v, want the input record", in)
	}
	objs = objs[1:]
	// Each access object says what the human line says, in the same order,
	// and its line number points at that write in the log.
	data, _ := os.ReadFile(mmioGolden)
	logLines := strings.Split(string(data), "\n")
	for i, o := range objs[:len(hl)] {
		h := strings.Fields(hl[i])
		loc := o["bar"].(string) + "+" + o["offset"].(string)
		if o["kind"] != "mmio_replay_access" || o["location"] != loc || o["access"] != h[0] || jsonNum(o["width"]) != h[1] || loc != h[2] || o["phys"] != h[3] || o["value"] != h[4] {
			t.Fatalf("object %d %v, human %q", i, o, hl[i])
		}
		ll := strings.Fields(logLines[int(o["line"].(float64))-1])
		// the log's time, 8.296099 -> 8296099000 ns
		if ll[0] != "W" || ll[4] != o["phys"] || ll[5] != o["value"] || strings.Replace(ll[2], ".", "", 1)+"000" != jsonNum(o["ts_ns"]) {
			t.Fatalf("object %d %v: log line %d is %q", i, o, int(o["line"].(float64)), ll)
		}
	}
	if s := objs[len(objs)-1]; s["kind"] != "mmio_replay_summary" || s["writes"] != 5388.0 || s["dry_run"] != true || s["divergences"] != 0.0 {
		t.Errorf("summary %v", s)
	}
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestMMIOReadJSONGawk: the mmio_access records of 'mmio read --json'
// (parsed by encoding/json) carry what gawk reads in the log's own text,
// line for line: access, width, ts_ns (the printed seconds and
// microseconds as digits), map id, phys, value and pc (null for 0x0), the
// kernel printing hex as 0x%lx. A wrong digit, a swapped field or a
// dropped line fails.
func TestMMIOReadJSONGawk(t *testing.T) {
	if _, err := exec.LookPath("gawk"); err != nil {
		t.Skip("gawk not installed (.ci/run installs it)")
	}
	const log = "../../testdata/mmiotrace/e1000-probe.log"
	prog := `/^[RW] / { split($3, t, "."); ns = t[1] t[2] "000"; sub(/^0+/, "", ns); if (ns == "") ns = "0"
		pc = ($7 == "0x0") ? "null" : $7
		print $1, $2, ns, $4, $5, $6, pc }`
	want, err := exec.Command("gawk", prog, log).Output()
	if err != nil {
		t.Fatal(err)
	}
	out, e, code := runMMIO(t, "mmio", "read", "--json", log)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var got strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var r struct {
			Kind, Access string
			Width        int
			TsNS         json.Number `json:"ts_ns"`
			MapID        int         `json:"map_id"`
			Phys, Value  string
			PC           *string
		}
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber()
		if err := d.Decode(&r); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, l)
		}
		if r.Kind != "mmio_access" {
			continue
		}
		pc := "null"
		if r.PC != nil {
			pc = *r.PC
		}
		fmt.Fprintf(&got, "%s %d %s %d %s %s %s\n", r.Access, r.Width, r.TsNS, r.MapID, r.Phys, r.Value, pc)
	}
	if got.String() != string(want) || len(want) < 1000 {
		t.Errorf("mmio_access records differ from gawk's reading of the log (%d and %d bytes)", got.Len(), len(want))
	}
}
