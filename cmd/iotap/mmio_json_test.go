package main

import (
	"encoding/json"
	"os"
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
		types[o["type"].(string)]++
	}
	if types["summary"] != 1 || types["map"] != 1 || types["register"] != 3 || len(objs) != 5+types["poll"] {
		t.Fatalf("object types %v", types)
	}
	sum := objs[0]
	kinds := sum["kinds"].(map[string]any)
	if sum["type"] != "summary" || sum["lines"] != 11957.0 || kinds["W"] != 5388.0 || kinds["R"] != 6558.0 || sum["lost"] != 0.0 {
		t.Errorf("summary %v", sum)
	}
	if m := objs[1]; m["map_id"] != 1.0 || m["phys"] != "0xfebc0000" || m["reads"] != 6558.0 || m["writes"] != 5388.0 {
		t.Errorf("map %v", m)
	}
	// The hottest register by the human output: EECD, 1611 reads, 5040 writes.
	if r := objs[2]; r["register"] != "0000:00:03.0/0+0x10" || r["name"] != "EECD" || r["reads"] != 1611.0 || r["writes"] != 5040.0 || r["width"] != 4.0 {
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
	if len(objs) != 3 {
		t.Fatalf("%d objects:\n%s", len(objs), out)
	}
	ch, add, sum := objs[0], objs[1], objs[2]
	if ch["op"] != "changed" || ch["kind"] != "W" || ch["register"] != "0000:00:03.0/0+0x100" || ch["width"] != 4.0 ||
		ch["a_line"] != 17.0 || ch["b_line"] != 17.0 || ch["a_value"] != "0x0" || ch["b_value"] != "0x2" {
		t.Errorf("changed: %v", ch)
	}
	if _, has := add["a_line"]; add["op"] != "only_b" || has || add["b_line"] != 18.0 || add["b_value"] != "0x1" || add["register"] != "0000:00:03.0/0+0x104" {
		t.Errorf("only_b: %v", add)
	}
	if sum["type"] != "summary" || sum["a_accesses"] != 11945.0 || sum["b_accesses"] != 11946.0 || sum["same"] != 11944.0 ||
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
	if len(objs) != len(hl)+1 || len(hl) != 5388 {
		t.Fatalf("%d objects for %d writes", len(objs), len(hl))
	}
	// Each access object says what the human line says, in the same order,
	// and its line number points at that write in the log.
	data, _ := os.ReadFile(mmioGolden)
	logLines := strings.Split(string(data), "\n")
	for i, o := range objs[:len(hl)] {
		h := strings.Fields(hl[i])
		loc := o["device"].(string) + "/" + jsonNum(o["bar"]) + "+" + o["offset"].(string)
		if o["type"] != "access" || o["kind"] != h[0] || jsonNum(o["width"]) != h[1] || loc != h[2] || o["phys"] != h[3] || o["value"] != h[4] {
			t.Fatalf("object %d %v, human %q", i, o, hl[i])
		}
		ll := strings.Fields(logLines[int(o["line"].(float64))-1])
		if ll[0] != "W" || ll[4] != o["phys"] || ll[5] != o["value"] {
			t.Fatalf("object %d %v: log line %d is %q", i, o, int(o["line"].(float64)), ll)
		}
	}
	if s := objs[len(objs)-1]; s["type"] != "summary" || s["writes"] != 5388.0 || s["dry_run"] != true || s["divergences"] != 0.0 {
		t.Errorf("summary %v", s)
	}
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
