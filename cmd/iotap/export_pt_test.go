//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// ptStatsKey is the comparable text of a pt_stats row or a pt stats
// --json object.
func ptStatsKey(trace string, v map[string]any, kinds map[string]int64, num func(any) int64) string {
	var ks []string
	for k, n := range kinds {
		ks = append(ks, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(ks)
	first, last, gaps := "-", "-", "-"
	if v["psb_gap_min"] != nil {
		gaps = fmt.Sprintf("%d/%d/%d", num(v["psb_gap_min"]), num(v["psb_gap_mean"]), num(v["psb_gap_max"]))
	}
	if v["first_tsc"] != nil {
		first, last = fmt.Sprint(num(v["first_tsc"])), fmt.Sprint(num(v["last_tsc"]))
	}
	return fmt.Sprintf("%s bytes=%d packets=%d psbs=%d gaps=%s ovf=%d err=%d skipped=%d trunc=%v tsc=%s..%s kinds=%s",
		trace, num(v["bytes"]), num(v["packets"]), num(v["psbs"]), gaps,
		num(v["overflows"]), num(v["errors"]), num(v["skipped_bytes"]), v["truncated"], first, last, strings.Join(ks, ","))
}

// duckPTStats returns the pt_stats rows under dir, by source file.
func duckPTStats(t *testing.T, dir string) map[string][]string {
	t.Helper()
	r := duck(t, fmt.Sprintf(`SELECT source_file, stream, bytes, packets, psbs, psb_gap_min, psb_gap_mean, psb_gap_max, overflows, errors,
    skipped_bytes, truncated, first_tsc::VARCHAR AS first_tsc, last_tsc::VARCHAR AS last_tsc, map_entries(kinds) AS kinds
FROM '%s/pt_stats/*.parquet' ORDER BY source_file, file_row_number`, dir))
	out := map[string][]string{}
	for _, row := range r.Rows {
		kinds := map[string]int64{}
		for _, e := range row["kinds"].([]any) {
			m := e.(map[string]any)
			kinds[str(m["key"])] = num(t, m["value"])
		}
		out[str(row["source_file"])] = append(out[str(row["source_file"])], ptStatsKey(str(row["stream"]), row, kinds, func(v any) int64 { return num(t, v) }))
	}
	return out
}

// cliPTStats runs iotap pt stats --json on path.
func cliPTStats(t *testing.T, path string) []string {
	t.Helper()
	out, errs, code := runIotap(t, "pt", "stats", "--json", path)
	if code != 0 && code != 3 {
		t.Fatalf("pt stats %s: exit %d: %s", path, code, errs)
	}
	var keys []string
	for i, o := range decodeLines(t, out) {
		if i == 0 {
			if o["kind"] != "input" || o["source"] != "pt" || o["file"] != path {
				t.Fatalf("pt stats %s: first record %v", path, o)
			}
			continue
		}
		kinds := map[string]int64{}
		for k, v := range o["kinds"].(map[string]any) {
			kinds[k] = int64(v.(float64))
		}
		keys = append(keys, ptStatsKey(str(o["stream"]), o, kinds, func(v any) int64 {
			if f, ok := v.(float64); ok {
				return int64(f)
			}
			return num(t, v)
		}))
	}
	return keys
}

// TestExportPTMatchesCLI exports the perf.data of a synthesized PT trace
// (intelpt/ptsynth single-steps a real program): DuckDB's pt_calls rows
// are the calls iotap pt calls --json prints, one for one, and each
// call's self_ns is its duration less that of the calls nested in it
// (found by their intervals in the JSON); pt_stats equals pt stats
// --json.
func TestExportPTMatchesCLI(t *testing.T) {
	needDuckDB(t)
	perf := synthPerfData(t)
	out, errs, code := runIotap(t, "pt", "calls", "--json", perf)
	if code != 0 {
		t.Fatalf("pt calls: exit %d: %s", code, errs)
	}
	type call struct {
		Thread    int64  `json:"tid"`
		Depth     int64  `json:"depth"`
		Function  string `json:"func"`
		Begin     int64  `json:"begin_ns"`
		End       int64  `json:"end_ns"`
		Kind      string `json:"call_kind"`
		EndReason string `json:"end_reason"`
		Insns     int64  `json:"insns"`
		SelfInsns int64  `json:"self_insns"`
		BeginTSC  uint64 `json:"begin_tsc"`
		EndTSC    uint64 `json:"end_tsc"`
	}
	var cs []call
	for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if i == 0 {
			if !strings.HasPrefix(l, `{"kind":"input","schema":1,"source":"pt","file":`) || !strings.Contains(l, `"clock":"perf"`) {
				t.Fatalf("pt calls --json: first line %s", l)
			}
			continue
		}
		var c call
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	var want []string
	var selfTotal int64
	for i, c := range cs {
		// Callees: the thread's calls one level deeper within [begin, end]
		// that end before it (callees end first in the JSON).
		child := int64(0)
		for j := i - 1; j >= 0; j-- {
			d := cs[j]
			if d.Thread == c.Thread && d.Depth == c.Depth+1 && d.Begin >= c.Begin && d.End <= c.End {
				child += d.End - d.Begin
			}
			if d.Thread == c.Thread && d.Depth <= c.Depth {
				break // the previous call at this depth: earlier ones are its callees
			}
		}
		self := max(c.End-c.Begin-child, 0)
		selfTotal += self
		want = append(want, fmt.Sprintf("%d %d %s %d %d self=%d %s %s %d %d tsc=%d..%d", c.Thread, c.Depth, c.Function, c.Begin, c.End, self, c.Kind, c.EndReason, c.Insns, c.SelfInsns, c.BeginTSC, c.EndTSC))
	}
	if len(cs) < 300 || selfTotal == 0 {
		t.Fatalf("%d calls, self time %d: the synthesized trace is not what this test expects", len(cs), selfTotal)
	}
	dir := t.TempDir()
	exportTo(t, dir, perf)
	r := duck(t, fmt.Sprintf(`SELECT tid, depth, func, begin_ns, end_ns, self_ns, call_kind, end_reason, insns, self_insns, clock_domain, begin_tsc::VARCHAR AS begin_tsc, end_tsc::VARCHAR AS end_tsc
FROM read_parquet('%s/pt_calls/*.parquet', file_row_number = true) ORDER BY file_row_number`, dir))
	var got []string
	for _, row := range r.Rows {
		got = append(got, fmt.Sprintf("%d %d %s %d %d self=%d %s %s %d %d tsc=%s..%s", num(t, row["tid"]), num(t, row["depth"]), row["func"],
			num(t, row["begin_ns"]), num(t, row["end_ns"]), num(t, row["self_ns"]), row["call_kind"], row["end_reason"], num(t, row["insns"]), num(t, row["self_insns"]),
			row["begin_tsc"], row["end_tsc"]))
		if row["clock_domain"] != "perf" {
			t.Fatalf("clock_domain %v, want perf (the perf.data has TIME_CONV)", row["clock_domain"])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("DuckDB: %d calls, pt calls --json: %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("call %d: DuckDB %s, pt calls --json %s", i, got[i], want[i])
		}
	}
	// The question "which functions got slower": self time per
	// function, fib's 177 calls.
	r = duck(t, fmt.Sprintf(`SELECT func, count(*) AS calls, sum(self_ns) AS self FROM '%s/pt_calls/*.parquet' WHERE func = 'fib' GROUP BY ALL`, dir))
	if len(r.Rows) != 1 || num(t, r.Rows[0]["calls"]) != 177 {
		t.Errorf("fib: %v, want 177 calls", r.Rows)
	}
	if got, want := duckPTStats(t, dir)[perf], cliPTStats(t, perf); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pt_stats:\n%s\npt stats --json:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	doc, err := os.ReadFile("../../docs/parquet.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"pt_stats", "pt_calls"} {
		checkSchema(t, dir, table, docTables(string(doc))[table])
	}
	// The captures row: a PT input, its packets, on the perf clock.
	r = duck(t, fmt.Sprintf(`SELECT source, format, records, loss, clock_domain FROM '%s/captures/*.parquet'`, dir))
	if row := r.Rows[0]; len(r.Rows) != 1 || row["source"] != "pt" || row["format"] != "perf.data" || row["loss"] != "" || num(t, row["records"]) < 100 {
		t.Errorf("captures: %v", r.Rows)
	}

	// A cut perf.data: what it holds is exported, the cut is loss (exit 3).
	b, _ := os.ReadFile(perf)
	cut := filepath.Join(t.TempDir(), "cut.data")
	os.WriteFile(cut, b[:len(b)*2/3], 0o600)
	if _, errs, code := runIotap(t, "export", "--parquet", filepath.Join(t.TempDir(), "cut"), cut); code != 3 || !strings.Contains(errs, "captures table") {
		t.Errorf("cut perf.data: exit %d: %s", code, errs)
	}
}

// TestExportPTCorpus: the pt_stats of the raw traces of libipt's test
// corpus, exported in one run, equal pt stats --json of each.
func TestExportPTCorpus(t *testing.T) {
	needDuckDB(t)
	traces, _ := filepath.Glob("../../../shared/testdata/intelpt-libipt/*.pt")
	if len(traces) == 0 {
		t.Skip("the libipt corpus is not in ../../../shared/testdata/intelpt-libipt")
	}
	if testing.Short() && len(traces) > 40 {
		traces = traces[:40]
	}
	dir := t.TempDir()
	_, errs, code := runIotap(t, append([]string{"export", "--parquet", dir}, traces...)...)
	if code != 0 && code != 3 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	got := duckPTStats(t, dir)
	for _, p := range traces {
		if g, w := got[p], cliPTStats(t, p); fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("%s: pt_stats %v, pt stats --json %v", filepath.Base(p), g, w)
		}
	}
}

// ptsynthPerfData is synthPerfData where it runs (Linux, gcc), else "".
func ptsynthPerfData(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		return ""
	}
	return synthPerfData(t)
}
