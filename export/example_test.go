package export_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/iotap/iotap/export"
)

// Export the bundled all-sources capture: one Parquet file per table and
// source, and a captures row per input saying what was read and lost.
func Example() {
	dir, _ := os.MkdirTemp("", "export-example")
	defer os.RemoveAll(dir)
	x, err := export.New(export.Options{Dir: dir, Identity: export.Identity{Host: "lab1"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	rows, err := x.ExportPath(context.Background(), "../testdata/capture")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := x.Close(); err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rows {
		fmt.Printf("%s: %s %s, %d records, clock %s, lost %q\n", filepath.Base(r.SourceFile), r.Source, r.Format, r.Records, r.ClockDomain, r.Loss)
	}
	for _, f := range x.Files() {
		rel, _ := filepath.Rel(dir, f)
		fmt.Println(filepath.Dir(rel))
	}
	// Output:
	// events.ndjson: events ndjson, 4 records, clock trace-local, lost ""
	// mmio.log.zst: mmio mmiotrace, 12665 records, clock trace-local, lost ""
	// usb.pcapng: usb pcapng, 12 records, clock realtime, lost ""
	// user_events
	// mmio_accesses
	// mmio_maps
	// mmio_fields
	// usb_events
	// usb_transfers
	// captures
}

// DuckDBCommand is 'iotap query': the duckdb command line that runs SQL
// over an export's tables, here one with the usb_transfers table only.
func ExampleDuckDBCommand() {
	dir, _ := os.MkdirTemp("", "query-example")
	defer os.RemoveAll(dir)
	os.Mkdir(filepath.Join(dir, "usb_transfers"), 0o700)
	cmd, err := export.DuckDBCommand(dir, "SELECT count(*) FROM usb_transfers")
	fmt.Println(strings.ReplaceAll(cmd, dir, "DIR"), err)
	// Output:
	// duckdb -c 'CREATE VIEW usb_transfers AS SELECT * FROM read_parquet('\''DIR/usb_transfers/**/*.parquet'\'', hive_partitioning = true, union_by_name = true);
	// SELECT count(*) FROM usb_transfers' <nil>
}

// Export several inputs, one line per input as it is exported, then the
// captures table; what was lost is returned per input.
func ExampleExporter_ExportAll() {
	dir, _ := os.MkdirTemp("", "export-example")
	defer os.RemoveAll(dir)
	x, err := export.New(export.Options{Dir: dir, Identity: export.Identity{Host: "lab1"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	lost, err := x.ExportAll(context.Background(), []string{"../testdata/capture", "../mmiotrace/testdata/kinds.log"},
		func(r export.CaptureRow) { fmt.Println(r) })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(lost)
	// Output:
	// ../testdata/capture/events.ndjson: events ndjson, 4 records
	// ../testdata/capture/mmio.log.zst: mmio mmiotrace, 12665 records
	// ../testdata/capture/usb.pcapng: usb pcapng, 12 records
	// ../mmiotrace/testdata/kinds.log: mmio mmiotrace, 14 records
	// [../mmiotrace/testdata/kinds.log: the log records 42 events lost by the kernel]
}

// 'iotap export --parquet out --partition host' without --host: the
// user's mistake, an *OptionError.
func ExampleOptionError() {
	_, err := export.New(export.Options{Dir: "out", Partition: []string{"host"}})
	var oe *export.OptionError
	fmt.Println(errors.As(err, &oe), err)
	// Output:
	// true export: --partition host needs --host
}
