package export

import (
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
