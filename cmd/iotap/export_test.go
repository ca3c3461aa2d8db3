package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The Parquet files are checked by DuckDB (npm @duckdb/node-api, installed
// by .ci/run with npm ci in test/duckdb): an independent reader whose SQL
// must give the numbers iotap's own commands print.

const duckDir = "../../test/duckdb"

type duckResult struct {
	Columns []string         `json:"columns"`
	Types   []string         `json:"types"`
	Rows    []map[string]any `json:"rows"`
}

func needDuckDB(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed (.ci/run installs it): the DuckDB oracle needs it")
	}
	if _, err := os.Stat(filepath.Join(duckDir, "node_modules", "@duckdb", "node-api")); err != nil {
		t.Skip("DuckDB not installed: run 'npm ci' in test/duckdb (.ci/run does)")
	}
}

// duck runs sql with DuckDB and returns the rows of its last statement.
func duck(t *testing.T, sql string) duckResult {
	t.Helper()
	cmd := exec.Command("node", "query.mjs")
	cmd.Dir = duckDir
	cmd.Stdin = strings.NewReader(sql)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("duckdb: %v\n%s\nSQL: %s", err, errb.String(), sql)
	}
	var r duckResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("duckdb output: %v: %s", err, out.String())
	}
	return r
}

func runIotap(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runMMIO(t, args...)
}

// num reads a DuckDB JSON value (BIGINTs come as strings) as int64.
func num(t *testing.T, v any) int64 {
	t.Helper()
	switch v := v.(type) {
	case float64:
		return int64(v)
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("not a number: %q", v)
		}
		return n
	}
	t.Fatalf("not a number: %#v", v)
	return 0
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func exportTo(t *testing.T, dir string, args ...string) {
	t.Helper()
	_, errs, code := runIotap(t, append([]string{"export", "--parquet", dir}, args...)...)
	if code != 0 {
		t.Fatalf("export %v: exit %d: %s", args, code, errs)
	}
}

var usbInputs = []string{
	"../../testdata/usbmon/lab-capture.pcapng",
	"../../testdata/usbmon/lab-0u.txt",
	"../../testdata/usbmon/lab-usbmon0.bin",
	"../../testdata/capture/usb.pcapng",
}

// TestExportUSBMatchesStats: per endpoint, DuckDB's count of usb_transfers
// and its exact nearest-rank p50/p99 of latency_ns agree with iotap usb
// stats (whose percentiles come from a histogram: exact below 64 µs,
// within 1/32 above); submissions and completions counted in usb_events
// agree too.
func TestExportUSBMatchesStats(t *testing.T) {
	needDuckDB(t)
	for _, in := range usbInputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			out, errs, code := runIotap(t, "usb", "stats", "--json", in)
			if code != 0 {
				t.Fatalf("usb stats: exit %d: %s", code, errs)
			}
			dir := t.TempDir()
			exportTo(t, dir, in)
			type key struct {
				bus, dev, ep int64
				transfer     string
			}
			want := map[key]map[string]any{}
			for _, o := range decodeLines(t, out) {
				if o["kind"] != "usb_endpoint" {
					continue
				}
				want[key{int64(o["bus"].(float64)), int64(o["dev"].(float64)), int64(o["ep"].(float64)), o["transfer"].(string)}] = o
			}
			r := duck(t, fmt.Sprintf(`
WITH t AS (SELECT bus, dev, ep, transfer, count(*) AS n,
    list_sort(list(latency_ns)) AS l FROM '%[1]s/usb_transfers/*.parquet' GROUP BY ALL),
e AS (SELECT bus, dev, ep, transfer,
    count(*) FILTER (urb_type = 'S') AS submissions, count(*) FILTER (urb_type = 'C') AS completions
    FROM '%[1]s/usb_events/*.parquet' WHERE NOT synthesized GROUP BY ALL)
SELECT e.*, coalesce(t.n, 0) AS n,
    t.l[greatest(1, ceil(0.5 * t.n))::BIGINT] AS p50, t.l[greatest(1, ceil(0.99 * t.n))::BIGINT] AS p99
FROM e LEFT JOIN t USING (bus, dev, ep, transfer) ORDER BY ALL`, dir))
			if len(r.Rows) != len(want) {
				t.Fatalf("DuckDB finds %d endpoints, usb stats %d", len(r.Rows), len(want))
			}
			for _, row := range r.Rows {
				k := key{num(t, row["bus"]), num(t, row["dev"]), num(t, row["ep"]), str(row["transfer"])}
				w, ok := want[k]
				if !ok {
					t.Errorf("endpoint %+v not in usb stats", k)
					continue
				}
				lat := w["latency"].(map[string]any)
				if n := num(t, row["n"]); n != int64(lat["count"].(float64)) {
					t.Errorf("%+v: %d transfers in Parquet, usb stats %v", k, n, lat["count"])
				}
				if num(t, row["submissions"]) != int64(w["submissions"].(float64)) || num(t, row["completions"]) != int64(w["completions"].(float64)) {
					t.Errorf("%+v: S/C %v/%v in Parquet, usb stats %v/%v", k, row["submissions"], row["completions"], w["submissions"], w["completions"])
				}
				if num(t, row["n"]) == 0 {
					continue
				}
				for _, q := range []string{"p50", "p99"} {
					// µs: the histogram's resolution (exact below 64 µs)
					exact, hist := num(t, row[q])/1e3, int64(math.Round(lat[q+"_ns"].(float64)/1e3))
					if exact < 64 && hist != exact || math.Abs(float64(hist-exact)) > float64(exact)/32+1 {
						t.Errorf("%+v: %s exact %d µs (DuckDB), usb stats %d µs", k, q, exact, hist)
					}
				}
			}
		})
	}
}

// TestExportMMIOMatchesStats: DuckDB's reads and writes per register
// (location: bar+offset, width) and the register names agree with iotap
// mmio stats over every register, and its top 20 is the same list.
func TestExportMMIOMatchesStats(t *testing.T) {
	needDuckDB(t)
	for _, in := range []string{mmioGolden, "../../testdata/capture/mmio.log.zst"} {
		t.Run(filepath.Base(in), func(t *testing.T) {
			out, errs, code := runIotap(t, "mmio", "stats", "--json", "--top", "100000", in)
			if code != 0 {
				t.Fatalf("mmio stats: exit %d: %s", code, errs)
			}
			var want []map[string]any
			for _, o := range decodeLines(t, out) {
				if o["kind"] == "mmio_register" {
					want = append(want, o)
				}
			}
			dir := t.TempDir()
			exportTo(t, dir, in)
			r := duck(t, fmt.Sprintf(`
SELECT CASE WHEN bar IS NULL THEN printf('0x%%x', phys) ELSE printf('%%s+0x%%x', bar, "offset") END AS reg,
    width, coalesce(register, '') AS name, coalesce(bar, '') AS bar,
    count(*) FILTER (access = 'R') AS reads, count(*) FILTER (access = 'W') AS writes
FROM '%s/mmio_accesses/*.parquet' WHERE access IN ('R', 'W')
GROUP BY ALL ORDER BY reads + writes DESC, min(line)`, dir))
			if len(r.Rows) != len(want) || len(want) < 20 {
				t.Fatalf("DuckDB finds %d registers, mmio stats %d", len(r.Rows), len(want))
			}
			for i, row := range r.Rows {
				w := want[i]
				got := fmt.Sprintf("%s %s w%d %q r%d w%d", row["reg"], row["bar"], num(t, row["width"]), row["name"], num(t, row["reads"]), num(t, row["writes"]))
				name, _ := w["register"].(string) // null: no name
				bar, _ := w["bar"].(string)       // null: outside a known BAR
				exp := fmt.Sprintf("%s %s w%d %q r%d w%d", w["location"], bar, int64(w["width"].(float64)), name, int64(w["reads"].(float64)), int64(w["writes"].(float64)))
				if got != exp {
					t.Errorf("register #%d: DuckDB %s, mmio stats %s", i+1, got, exp)
				}
			}
		})
	}
}

// TestExportEventsCounts: events per name in user_events equal the count
// of records of each name in the recorded NDJSON (the events consumer's
// output), and their fields come back typed.
func TestExportEventsCounts(t *testing.T) {
	needDuckDB(t)
	in := "../../testdata/capture/events.ndjson"
	want := map[string]int64{}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e struct{ Name string }
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		want[e.Name]++
	}
	f.Close()
	dir := t.TempDir()
	exportTo(t, dir, in)
	r := duck(t, fmt.Sprintf(`SELECT name, count(*) AS n, sum(int_fields['n']) AS sum_n, min(ts_ns) AS first
FROM '%s/user_events/*.parquet' GROUP BY name ORDER BY name`, dir))
	got := map[string]int64{}
	for _, row := range r.Rows {
		got[str(row["name"])] = num(t, row["n"])
		if row["name"] == "lab_step" && num(t, row["sum_n"]) != 3 {
			t.Errorf("lab_step: sum of field n %v, want 1+2", row["sum_n"])
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("DuckDB counts %v, the NDJSON %v", got, want)
	}
}

// TestExportSchema checks every table's physical schema as DuckDB reads
// it (parquet_schema): column names, types and which may be null, against
// docs/parquet.md's tables; and that required columns hold no nulls and
// time columns are sorted.
func TestExportSchema(t *testing.T) {
	needDuckDB(t)
	dir := t.TempDir()
	exportTo(t, dir, "../../testdata/capture")
	doc, err := os.ReadFile("../../docs/parquet.md")
	if err != nil {
		t.Fatal(err)
	}
	wantTables := docTables(string(doc))
	for _, table := range []string{"captures", "usb_events", "usb_transfers", "mmio_accesses", "mmio_maps", "mmio_fields", "user_events"} {
		t.Run(table, func(t *testing.T) {
			checkSchema(t, dir, table, wantTables[table])
		})
	}
	// Sorted by time within each file, identity never null or empty where
	// the capture has it.
	for _, tc := range []struct{ table, ts string }{{"usb_events", "ts_ns"}, {"usb_transfers", "ts_ns"}, {"mmio_accesses", "ts_ns"}, {"user_events", "ts_ns"}} {
		r := duck(t, fmt.Sprintf(`SELECT count(*) FILTER (d < 0) AS unsorted, count(*) FILTER (capture_id IS NULL OR capture_id = '' OR source_file IS NULL OR clock_domain = '') AS noid
FROM (SELECT capture_id, source_file, clock_domain, %[2]s - lag(%[2]s) OVER (ORDER BY file_row_number) AS d FROM read_parquet('%[1]s/%[3]s/*.parquet', file_row_number = true))`, dir, tc.ts, tc.table))
		if num(t, r.Rows[0]["unsorted"]) != 0 || num(t, r.Rows[0]["noid"]) != 0 {
			t.Errorf("%s: %v rows out of time order, %v without identity", tc.table, r.Rows[0]["unsorted"], r.Rows[0]["noid"])
		}
	}
}

// checkSchema compares the one file of table under dir with want, the
// table's rows in docs/parquet.md ("name TYPE null"), as DuckDB reads it.
func checkSchema(t *testing.T, dir, table string, want []string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, table, "*.parquet"))
	if len(files) != 1 {
		t.Fatalf("%s: %d files", table, len(files))
	}
	// parquet_schema also lists nested fields: a top-level column is
	// the first element of its name.
	r := duck(t, fmt.Sprintf(`WITH ps AS (SELECT name, repetition_type, row_number() OVER () AS i FROM parquet_schema('%[1]s')),
d AS (SELECT column_name, column_type, row_number() OVER () AS j FROM (DESCRIBE SELECT * FROM '%[1]s'))
SELECT d.column_name AS name, d.column_type AS type,
    (SELECT repetition_type FROM ps WHERE ps.name = d.column_name ORDER BY i LIMIT 1) AS rep
FROM d ORDER BY j`, files[0]))
	if len(want) == 0 {
		t.Fatalf("docs/parquet.md has no table %s", table)
	}
	var got []string
	for _, row := range r.Rows {
		null := "no"
		if row["rep"] == "OPTIONAL" || row["rep"] == "REPEATED" {
			null = "yes"
		}
		got = append(got, fmt.Sprintf("%s %s %s", row["name"], row["type"], null))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("schema of %s (name, DuckDB type, nullable):\n%s\ndocs/parquet.md:\n%s", table, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// docTables reads the column tables of docs/parquet.md: under a heading
// "### `TABLE`", rows "| `name` | TYPE | null? | ... |".
func docTables(doc string) map[string][]string {
	out := map[string][]string{}
	table := ""
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "### `") {
			table = strings.Trim(strings.TrimPrefix(l, "### "), "`")
			continue
		}
		if table == "" || !strings.HasPrefix(l, "| `") {
			continue
		}
		cells := strings.Split(l, "|")
		if len(cells) < 4 {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		typ := strings.Trim(strings.TrimSpace(cells[2]), "`")
		null := strings.TrimSpace(cells[3])
		out[table] = append(out[table], fmt.Sprintf("%s %s %s", name, typ, null))
	}
	return out
}

// TestExportManyHosts exports the lab captures as if from three hosts into
// one Hive-partitioned tree; one DuckDB query over **/*.parquet compares
// the hosts, and must give what each host's export alone gives.
func TestExportManyHosts(t *testing.T) {
	needDuckDB(t)
	dir, want, ptInputs := manyHostsTree(t)
	files, _ := filepath.Glob(filepath.Join(dir, "usb_transfers", "host=*", "date=*", "*.parquet"))
	if len(files) != 3 {
		t.Fatalf("%d usb_transfers files in host=/date= directories: %v", len(files), files)
	}
	r := duck(t, fmt.Sprintf(`
WITH u AS (SELECT host, any_value(boot_id) AS boot, count(*) AS transfers FROM read_parquet('%[1]s/usb_transfers/**/*.parquet', hive_partitioning = true) GROUP BY host),
m AS (SELECT host, count(*) FILTER (access IN ('R', 'W')) AS accesses FROM read_parquet('%[1]s/mmio_accesses/**/*.parquet', hive_partitioning = true) GROUP BY host)
SELECT host, boot, transfers, coalesce(accesses, 0) AS accesses FROM u FULL JOIN m USING (host) ORDER BY host`, dir))
	got := map[string]string{}
	for _, row := range r.Rows {
		got[str(row["host"])] = fmt.Sprintf("%s %d %d", row["boot"], num(t, row["transfers"]), num(t, row["accesses"]))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("per host (boot transfers accesses): DuckDB %v, iotap stats %v", got, want)
	}
	// The captures table over all hosts: one row per input, none lost.
	r = duck(t, fmt.Sprintf(`SELECT host, count(*) AS inputs, sum(lost_events + skipped_lines) AS lost, bool_and(complete) AS complete
FROM read_parquet('%s/captures/**/*.parquet', hive_partitioning = true) GROUP BY host ORDER BY host`, dir))
	var summary []string
	for _, row := range r.Rows {
		summary = append(summary, fmt.Sprintf("%s:%d:%d:%v", row["host"], num(t, row["inputs"]), num(t, row["lost"]), row["complete"]))
	}
	if s, w := strings.Join(summary, " "), fmt.Sprintf("lab-a:%d:0:true lab-b:2:0:true lab-c:2:0:true", 3+ptInputs); s != w {
		t.Errorf("captures per host: %s, want %s", s, w)
	}
	// The DuckDB examples of docs/parquet.md run on this tree; the hottest
	// registers per host are mmio stats' top 5.
	qs := docQueries(t, "DuckDB", dir)
	if len(qs) < 5 {
		t.Fatalf("%d DuckDB examples in docs/parquet.md", len(qs))
	}
	for _, q := range qs {
		if ptInputs == 0 && strings.Contains(q, "pt_calls") {
			continue
		}
		r := duck(t, q)
		if strings.Contains(q, "hottest registers per host") {
			if len(r.Rows) != 15 {
				t.Errorf("hottest registers: %d rows, want 5 for each of 3 hosts", len(r.Rows))
			}
		}
	}
}

// manyHostsTree exports the lab captures as if from three hosts into one
// Hive-partitioned tree (and, where ptsynth runs, a synthesized PT trace
// on lab-a); want is, per host, "boot transfers accesses" as iotap usb
// stats and mmio stats count them; ptInputs the PT inputs exported.
func manyHostsTree(t *testing.T) (dir string, want map[string]string, ptInputs int) {
	t.Helper()
	dir = t.TempDir()
	hosts := []struct {
		host, boot string
		inputs     []string
		usb, mmio  string // the same data, for the oracle
	}{
		{"lab-a", "boot-a", []string{"../../testdata/capture"}, "../../testdata/capture/usb.pcapng", "../../testdata/capture/mmio.log.zst"},
		{"lab-b", "boot-b", []string{"../../testdata/usbmon/lab-capture.pcapng", mmioGolden}, "../../testdata/usbmon/lab-capture.pcapng", mmioGolden},
		{"lab-c", "boot-c", []string{"../../testdata/usbmon/lab-0u.txt", "../../testdata/capture/mmio.log.zst"}, "../../testdata/usbmon/lab-0u.txt", "../../testdata/capture/mmio.log.zst"},
	}
	if perf := ptsynthPerfData(t); perf != "" {
		hosts[0].inputs = append(hosts[0].inputs, perf)
		ptInputs = 1
	}
	want = map[string]string{}
	for _, h := range hosts {
		exportTo(t, dir, append([]string{"--partition", "host,date", "--host", h.host, "--boot-id", h.boot, "--kernel-release", "6.12.0"}, h.inputs...)...)
		// The oracle per host: iotap's own commands on that host's inputs.
		var transfers int64
		out, _, _ := runIotap(t, "usb", "stats", "--json", h.usb)
		for _, o := range decodeLines(t, out) {
			if o["kind"] == "usb_endpoint" {
				transfers += int64(o["latency"].(map[string]any)["count"].(float64))
			}
		}
		out, _, _ = runIotap(t, "mmio", "stats", "--json", "--top", "0", h.mmio)
		k := decodeLines(t, out)[1]["records"].(map[string]any) // after the input record
		want[h.host] = fmt.Sprintf("%s %d %d", h.boot, transfers, int64(k["R"].(float64)+k["W"].(float64)))
	}
	return dir, want, ptInputs
}

// TestExportLoss: a truncated capture and an unreadable line exit 3 and
// are recorded in the captures table; --allow-loss exits 0.
func TestExportLoss(t *testing.T) {
	needDuckDB(t)
	src, err := os.ReadFile("../../testdata/usbmon/lab-capture.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	trunc := filepath.Join(tmp, "trunc.pcapng")
	os.WriteFile(trunc, src[:len(src)-100], 0o600)
	log, _ := os.ReadFile(mmioGolden)
	bad := filepath.Join(tmp, "bad.log")
	os.WriteFile(bad, bytes.Replace(log, []byte("R 4 8.290117 1 0xfebc0008"), []byte("R 4 8.290117 1 0xfebcZZZZ"), 1), 0o600)
	dir := filepath.Join(tmp, "out")
	_, errs, code := runIotap(t, "export", "--parquet", dir, trunc)
	if code != 3 || !strings.Contains(errs, "captures table") {
		t.Errorf("truncated input: exit %d: %s", code, errs)
	}
	_, errs, code = runIotap(t, "export", "--parquet", dir, "--keep-going", bad)
	if code != 3 {
		t.Errorf("bad line with --keep-going: exit %d: %s", code, errs)
	}
	_, errs, code = runIotap(t, "export", "--parquet", dir, bad)
	if code != 3 {
		t.Errorf("bad line: exit %d: %s", code, errs)
	}
	if _, errs, code = runIotap(t, "export", "--parquet", filepath.Join(tmp, "o2"), "--allow-loss", trunc); code != 0 {
		t.Errorf("--allow-loss: exit %d: %s", code, errs)
	}
	r := duck(t, fmt.Sprintf(`SELECT source_file, truncated, skipped_lines, complete, loss, records FROM '%s/captures/*.parquet' ORDER BY exported_at, source_file`, dir))
	var got []string
	for _, row := range r.Rows {
		got = append(got, fmt.Sprintf("%s trunc=%v skipped=%d complete=%v records=%d loss=%v", filepath.Base(str(row["source_file"])), row["truncated"], num(t, row["skipped_lines"]), row["complete"], num(t, row["records"]), row["loss"] != ""))
	}
	sort.Strings(got)
	want := []string{
		"bad.log trunc=false skipped=0 complete=false records=11 loss=true",
		"trunc.pcapng trunc=true skipped=0 complete=true records=183 loss=true",
	}
	// The --keep-going export of bad.log is replaced by the later one (same
	// capture id): its rows are the run that stopped at line 12.
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("captures rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestExportMMIOFields: joined with mmio_fields, every named access of
// the log gives the bitfields iotap mmio names --json prints for it.
func TestExportMMIOFields(t *testing.T) {
	needDuckDB(t)
	out, errs, code := runIotap(t, "mmio", "names", "--json", mmioGolden)
	if code != 0 {
		t.Fatalf("mmio names: exit %d: %s", code, errs)
	}
	want := map[int64]string{}
	for _, o := range decodeLines(t, out) {
		fs, _ := o["fields"].([]any)
		type f struct {
			low int
			s   string
		}
		var l []f
		for _, x := range fs {
			m := x.(map[string]any)
			bits := m["bits"].(string)
			if i := strings.IndexByte(bits, ':'); i >= 0 {
				bits = bits[i+1:]
			}
			low, _ := strconv.Atoi(bits)
			l = append(l, f{low, fmt.Sprintf("%s=%d%s", str(m["name"]), uint64(m["value"].(float64)), map[bool]string{true: "/" + str(m["enum"]), false: ""}[m["enum"] != nil])})
		}
		if len(l) == 0 {
			continue
		}
		sort.Slice(l, func(i, j int) bool { return l[i].low < l[j].low })
		var s []string
		for _, x := range l {
			s = append(s, x.s)
		}
		want[int64(o["line"].(float64))] = strings.Join(s, " ")
	}
	dir := t.TempDir()
	exportTo(t, dir, mmioGolden)
	r := duck(t, fmt.Sprintf(`SELECT a.line, string_agg(f.field || '=' || f.field_value || CASE WHEN f.enum <> '' THEN '/' || f.enum ELSE '' END, ' ' ORDER BY f.low) AS fields
FROM '%[1]s/mmio_accesses/*.parquet' a JOIN '%[1]s/mmio_fields/*.parquet' f USING (capture_id, bar, register, value)
GROUP BY a.line ORDER BY a.line`, dir))
	if len(r.Rows) != len(want) || len(want) < 1000 {
		t.Fatalf("DuckDB decodes %d accesses, mmio names %d", len(r.Rows), len(want))
	}
	bad := 0
	for _, row := range r.Rows {
		line := num(t, row["line"])
		if got := str(row["fields"]); got != want[line] && bad < 10 {
			bad++
			t.Errorf("line %d: DuckDB %q, mmio names %q", line, got, want[line])
		}
	}
}

// docQueries returns the statements of the examples of docs/parquet.md for
// engine ("DuckDB", "ClickHouse"), with their directory "fleet/" (and
// ClickHouse's s3() bucket) replaced by dir.
func docQueries(t *testing.T, engine, dir string) []string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/parquet.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "### "+engine)
	if i < 0 {
		t.Fatalf("docs/parquet.md: no %s examples", engine)
	}
	s = s[i:]
	s = s[strings.Index(s, "```sql")+len("```sql"):]
	s = s[:strings.Index(s, "```")]
	var out []string
	for _, q := range strings.Split(s, ";\n") {
		if strings.TrimSpace(q) != "" {
			q = strings.ReplaceAll(q, "s3('https://bucket.s3.amazonaws.com/fleet/", "file('"+dir+"/")
			out = append(out, strings.ReplaceAll(q, "'fleet/", "'"+dir+"/"))
		}
	}
	return out
}

// TestQueryPrintsDuckDBCommand: the SQL of the command iotap query
// prints runs in DuckDB and counts what the export wrote.
func TestQueryPrintsDuckDBCommand(t *testing.T) {
	needDuckDB(t)
	dir := t.TempDir()
	exportTo(t, dir, "--partition", "host", "--host", "h'1", "../../testdata/capture")
	out, errs, code := runIotap(t, "query", dir, "SELECT count(*) AS n, any_value(host) AS host FROM usb_transfers")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// Undo the shell quoting: duckdb -c '...'
	if !strings.HasPrefix(out, "duckdb -c '") {
		t.Fatalf("not a duckdb command: %s", out)
	}
	sql := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(out), "duckdb -c '"), "'")
	sql = strings.ReplaceAll(sql, `'\''`, "'")
	r := duck(t, sql)
	usbOut, _, _ := runIotap(t, "usb", "stats", "--json", "../../testdata/capture/usb.pcapng")
	var want int64
	for _, o := range decodeLines(t, usbOut) {
		if o["kind"] == "usb_endpoint" {
			want += int64(o["latency"].(map[string]any)["count"].(float64))
		}
	}
	if num(t, r.Rows[0]["n"]) != want || r.Rows[0]["host"] != "h'1" {
		t.Errorf("DuckDB through iotap query: %v, want %d transfers of host h'1", r.Rows[0], want)
	}
	if _, _, code := runIotap(t, "query", t.TempDir()); code != 1 {
		t.Errorf("query of an empty directory: exit %d, want 1", code)
	}
}

// ndjsonFields reads docs/ndjson.md's field tables: for each record kind
// (the table whose `kind` row names it), the field names of its rows.
func ndjsonFields(t *testing.T) map[string]map[string]bool {
	t.Helper()
	doc, err := os.ReadFile("../../docs/ndjson.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	var cur map[string]bool
	kindRow := regexp.MustCompile("^\\| `kind` \\| string \\| `\"([a-z_]+)\"`")
	name := regexp.MustCompile("`([a-z_0-9]+)`")
	for _, l := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(l, "|") {
			cur = nil
			continue
		}
		if m := kindRow.FindStringSubmatch(l); m != nil {
			cur = map[string]bool{}
			out[m[1]] = cur
		}
		if cur == nil {
			continue
		}
		cells := strings.Split(l, "|")
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			cur[m[1]] = true
		}
	}
	return out
}

// TestParquetNDJSONVocabulary: the columns of the Parquet tables are
// named as the fields of the NDJSON records of the same data
// (docs/ndjson.md): a column is an identity column, a field of the
// record, or one of the few Parquet-only columns listed here with why.
func TestParquetNDJSONVocabulary(t *testing.T) {
	doc, err := os.ReadFile("../../docs/parquet.md")
	if err != nil {
		t.Fatal(err)
	}
	tables := docTables(string(doc))
	fields := ndjsonFields(t)
	identity := map[string]bool{"host": true, "boot_id": true, "kernel_release": true, "capture_id": true, "source_file": true, "clock_domain": true}
	for _, tc := range []struct {
		table, record string
		only          map[string]string // Parquet-only column: why
	}{
		{"usb_events", "usb_event", map[string]string{
			"data_length": "the payload itself stays out of the table",
			"vendor_id":   "vidpid as numbers, for joins", "product_id": "vidpid as numbers, for joins"}},
		{"mmio_accesses", "mmio_access", map[string]string{
			"line": "the line of the log, to go back to it", "pid": "", "cpu": "issue F: who accessed",
			"pci": "as mmio_pcidev names it", "vendor_id": "mmio_pcidev's pci_id as numbers", "device_id": "",
			"driver": "as mmio_pcidev names it", "bar": "as mmio stats --json places registers", "bar_index": "the BAR's index, for filters",
			"offset": "as mmio stats --json places registers", "register": "as mmio stats --json names registers",
			"decoded": "the value's bitfields, as mmio names prints them"}},
		{"mmio_maps", "mmio_map", map[string]string{
			"line": "", "pci": "", "vendor_id": "", "device_id": "", "driver": "", "bar": "", "bar_index": "", "offset": "the mapping's start in the BAR"}},
		{"usb_transfers", "usb_pair", map[string]string{
			"submit_ts_ns": "the submission's time (ts_ns is the completion's)",
			"outcome":      "the status classified as usb stats counts it",
			"vidpid":       "device identity, per row (usb_device has it in NDJSON)", "vendor_id": "", "product_id": "",
			"manufacturer": "", "product": "", "interface_class": "the class owning the endpoint"}},
	} {
		rec := fields[tc.record]
		if len(rec) == 0 {
			t.Fatalf("docs/ndjson.md has no %s record", tc.record)
		}
		cols := tables[tc.table]
		if len(cols) == 0 {
			t.Fatalf("docs/parquet.md has no %s table", tc.table)
		}
		for _, c := range cols {
			name := strings.Fields(c)[0]
			if identity[name] || rec[name] {
				continue
			}
			if _, ok := tc.only[name]; !ok {
				t.Errorf("%s.%s: no field %s in NDJSON's %s record (rename it as NDJSON names it, or list it as Parquet-only)", tc.table, name, name, tc.record)
			}
		}
	}
}

// TestREADMEParquetExample runs the README's export and DuckDB query (the
// three lines under "Across many machines") and checks its numbers: per
// endpoint, the transfers usb stats counts.
func TestREADMEParquetExample(t *testing.T) {
	needDuckDB(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```sh\n(go run ./cmd/iotap export [^\n]*)\nduckdb -c \"(.*?)\"\n```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md: no export + duckdb example")
	}
	args := strings.Fields(string(m[1]))[3:] // after "go run ./cmd/iotap"
	dir := t.TempDir()
	for i, a := range args {
		switch {
		case a == "/tmp/pq":
			args[i] = dir
		case strings.HasPrefix(a, "testdata/"):
			args[i] = "../../" + a
		}
	}
	if _, errs, code := runIotap(t, args...); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errs)
	}
	r := duck(t, strings.ReplaceAll(string(m[2]), "/tmp/pq/", dir+"/"))
	out, _, _ := runIotap(t, "usb", "stats", "--json", "../../testdata/capture/usb.pcapng")
	want := map[string]int64{}
	for _, o := range decodeLines(t, out) {
		if o["kind"] == "usb_endpoint" {
			if n := int64(o["latency"].(map[string]any)["count"].(float64)); n > 0 {
				want[fmt.Sprintf("lab1 %v %v", o["dev"], o["ep"])] += n
			}
		}
	}
	got := map[string]int64{}
	for _, row := range r.Rows {
		got[fmt.Sprintf("%s %d %d", row["host"], num(t, row["dev"]), num(t, row["ep"]))] += num(t, row["n"])
		if row["p99_ns"] == nil {
			t.Errorf("no p99: %v", row)
		}
	}
	if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("README query: %v, usb stats: %v", got, want)
	}
}
