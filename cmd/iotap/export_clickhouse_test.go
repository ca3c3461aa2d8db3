package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// ClickHouse is the second engine that reads the export: chDB (npm chdb,
// whose platform package ships ClickHouse's engine as a library),
// installed by .ci/run with npm ci in test/clickhouse.

const clickhouseDir = "../../test/clickhouse"

func needClickHouse(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed (.ci/run installs it): the ClickHouse oracle needs it")
	}
	if _, err := os.Stat(filepath.Join(clickhouseDir, "node_modules", "chdb")); err != nil {
		t.Skip("ClickHouse (chDB) not installed: run 'npm ci' in test/clickhouse (.ci/run does)")
	}
}

// clickhouse runs one statement and returns its rows.
func clickhouse(t *testing.T, sql string) []map[string]any {
	t.Helper()
	cmd := exec.Command("node", "query.mjs")
	cmd.Dir = clickhouseDir
	cmd.Stdin = strings.NewReader(sql)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("clickhouse: %v\n%s\nSQL: %s", err, errb.String(), sql)
	}
	var rows []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("clickhouse output %q: %v", l, err)
		}
		rows = append(rows, m)
	}
	return rows
}

// normRows turns rows into sorted lines of their values (cols in order),
// numbers to 9 significant digits, so that two engines' JSON compare.
func normRows(rows []map[string]any, cols []string) []string {
	var out []string
	for _, r := range rows {
		var vs []string
		for _, c := range cols {
			v := r[c]
			if s, ok := v.(string); ok {
				if f, err := strconv.ParseFloat(s, 64); err == nil {
					v = f
				}
			}
			if f, ok := v.(float64); ok {
				vs = append(vs, strconv.FormatFloat(f, 'g', 9, 64))
			} else {
				vs = append(vs, fmt.Sprint(v))
			}
		}
		out = append(out, strings.Join(vs, " "))
	}
	sort.Strings(out)
	return out
}

// questions maps the leading "-- question" comment of each example of
// an engine to its statement.
func questions(qs []string) map[string]string {
	m := map[string]string{}
	for _, q := range qs {
		q = strings.TrimSpace(q)
		if strings.HasPrefix(q, "-- ") {
			m[strings.SplitN(q, "\n", 2)[0]] = q
		}
	}
	return m
}

// TestExportClickHouse runs the ClickHouse examples of docs/parquet.md
// with ClickHouse's engine on the three-host tree of TestExportManyHosts
// and checks that each answers its question as the DuckDB example of the
// same question does (same rows, numbers to 9 digits); the per-host
// transfers and accesses equal iotap usb stats and mmio stats.
func TestExportClickHouse(t *testing.T) {
	needDuckDB(t)
	needClickHouse(t)
	dir, want, ptInputs := manyHostsTree(t)
	ch, dk := questions(docQueries(t, "ClickHouse", dir)), questions(docQueries(t, "DuckDB", dir))
	if len(ch) < 6 {
		t.Fatalf("%d ClickHouse examples in docs/parquet.md", len(ch))
	}
	for q, sql := range ch {
		if ptInputs == 0 && strings.Contains(sql, "pt_calls") {
			continue
		}
		t.Run(strings.TrimPrefix(q, "-- "), func(t *testing.T) {
			got := clickhouse(t, sql)
			dsql, ok := dk[q]
			if !ok {
				t.Fatalf("no DuckDB example for %q", q)
			}
			d := duck(t, dsql)
			cols := d.Columns
			if strings.Contains(q, "hottest registers") {
				// ties at the 5th place may pick other registers: compare the counts
				cols = []string{"host", "accesses"}
			}
			g, w := normRows(got, cols), normRows(d.Rows, cols)
			if strings.Join(g, "\n") != strings.Join(w, "\n") {
				t.Errorf("ClickHouse:\n%s\nDuckDB:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
			}
			if len(g) == 0 && !strings.Contains(q, "0x5800") {
				t.Errorf("no rows")
			}
		})
	}
	// The per-host comparison in ClickHouse against iotap's own counts.
	rows := clickhouse(t, fmt.Sprintf(`SELECT host, any(boot_id) AS boot, count() AS transfers,
    (SELECT count() FROM file('%[1]s/mmio_accesses/**/*.parquet', 'Parquet') AS m WHERE m.host = u.host AND access IN ('R', 'W')) AS accesses
FROM file('%[1]s/usb_transfers/**/*.parquet', 'Parquet') AS u GROUP BY host ORDER BY host`, dir))
	got := map[string]string{}
	for _, r := range rows {
		got[str(r["host"])] = fmt.Sprintf("%s %d %d", r["boot"], num(t, r["transfers"]), num(t, r["accesses"]))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("per host (boot transfers accesses): ClickHouse %v, iotap stats %v", got, want)
	}
}
