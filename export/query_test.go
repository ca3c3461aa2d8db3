package export

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDuckDBCommand: a POSIX shell splits the command line back into
// duckdb, the option and the SQL given, byte for byte (a quote in the SQL
// too); without SQL the views are the -cmd; a directory without a table
// is an error naming it.
func TestDuckDBCommand(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "usb_transfers"), 0o700); err != nil {
		t.Fatal(err)
	}
	split := func(cmd string) []string {
		out, err := exec.Command(sh, "-c", `eval "set -- $1"; printf '%s\0' "$@"`, "sh", cmd).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	}
	sql := "SELECT count(*) FROM usb_transfers WHERE host = 'h''1'"
	cmd, err := DuckDBCommand(dir, sql)
	if err != nil {
		t.Fatal(err)
	}
	views := ViewsSQL(dir)
	if !strings.Contains(views, "usb_transfers") {
		t.Fatalf("views %q", views)
	}
	if got := split(cmd); len(got) != 3 || got[0] != "duckdb" || got[1] != "-c" || got[2] != views+sql {
		t.Errorf("the shell reads %q", got)
	}
	cmd, err = DuckDBCommand(dir, "")
	if got := split(cmd); err != nil || len(got) != 3 || got[1] != "-cmd" || got[2] != strings.TrimSpace(views) {
		t.Errorf("without SQL: %q, %v", got, err)
	}
	empty := t.TempDir()
	if _, err := DuckDBCommand(empty, sql); err == nil || !strings.Contains(err.Error(), empty+": no table") {
		t.Errorf("empty directory: %v", err)
	}
}
