package export

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ViewsSQL returns DuckDB statements that make one view per table found
// under dir (read_parquet over every file of the table, Hive partitions
// as columns, schemas united by name), so that queries name the tables
// plainly: SELECT ... FROM usb_transfers.
func ViewsSQL(dir string) string {
	var b strings.Builder
	for _, t := range Tables {
		if st, err := os.Stat(filepath.Join(dir, t)); err != nil || !st.IsDir() {
			continue
		}
		glob := filepath.ToSlash(filepath.Join(dir, t)) + "/**/*.parquet"
		b.WriteString("CREATE VIEW " + t + " AS SELECT * FROM read_parquet('" + strings.ReplaceAll(glob, "'", "''") +
			"', hive_partitioning = true, union_by_name = true);\n")
	}
	return b.String()
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// DuckDBCommand returns the shell command line of 'iotap query': duckdb
// running sql over the views of the export under dir (ViewsSQL), or
// without sql ("") duckdb's shell with the views defined. Its error says
// when dir holds no table of an export.
func DuckDBCommand(dir, sql string) (string, error) {
	views := ViewsSQL(dir)
	if views == "" {
		return "", fmt.Errorf("query: %s: no table of an iotap export (run iotap export --parquet %s INPUT...)", dir, dir)
	}
	if sql == "" {
		return "duckdb -cmd " + ShellQuote(strings.TrimSpace(views)), nil
	}
	return "duckdb -c " + ShellQuote(views+sql), nil
}
