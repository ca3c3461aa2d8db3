package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/export"
)

func newExportCmd(e *env) *cobra.Command {
	var (
		opt       export.Options
		partition string
		allowLoss lossFlag
		window    windowFlags
	)
	c := &cobra.Command{
		Use:   "export --parquet DIR [flags] INPUT...",
		Short: "Write captures as Parquet tables for DuckDB, ClickHouse, Spark",
		Long: `Export captures as Parquet files, one directory per table under DIR:
usb_events, usb_transfers, mmio_accesses, mmio_maps, mmio_fields, user_events,
pt_stats, pt_calls and captures (one row per input: identity, clock, what was lost). Every row
carries the capture identity: host, boot_id, kernel_release, capture_id,
source_file, clock_domain. docs/parquet.md describes every column.

An INPUT is a usbmon capture (text, binary, pcap, pcapng), an mmiotrace
log (plain or compressed), a user_events NDJSON file, an Intel PT trace
(perf.data, raw, or an 'iotap pt capture' directory: pt_calls needs the
traced binaries, found as 'pt calls' finds them), or a capture
directory (iotap capture -o DIR), whose files share one capture id and
whose clocks.json gives each source's offset to the common clock.

Files are zstd-compressed, rows in time order as captured, written
through a temporary file and renamed. Exporting the same input again
replaces its files. --partition host,date writes Hive-style directories
(TABLE/host=H/date=YYYY-MM-DD/), read by DuckDB's read_parquet(...,
hive_partitioning=true), ClickHouse and Spark.

--from/--to export only the records of a time window (the syntax of 'iotap
cut --help'), each input cut in-process as 'iotap cut' cuts it, seeking with
its index; in a capture directory mark:NAME is placed on the capture's clock
(clocks.json) and a file the window does not apply to is left out with a
warning. Intel PT inputs are not exported by window: cut them first.

Exit code 3 when an input lost data (dropped events, truncation, lines
skipped, a decoding error that stopped it) unless --allow-loss; the loss
is recorded in the captures table either way.`,
		Example: `  iotap export --parquet out testdata/capture
  iotap export --parquet fleet --partition host,date --host lab1 --boot-id "$(cat /proc/sys/kernel/random/boot_id)" cap/
  iotap export --parquet probe --from 'mark:probe done' --to +2s e1000.log
  duckdb -c "SELECT name, count(*) FROM 'out/user_events/**/*.parquet' GROUP BY name"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opt.Dir == "" {
				return usageErrorf("export: --parquet DIR is required")
			}
			var err error
			if opt.Window, err = window.spec("export"); err != nil {
				return err
			}
			if partition != "" {
				opt.Partition = strings.Split(partition, ",")
			}
			// One progress line for the whole export; each input adds its size.
			m := e.meter("iotap: export", 0, false)
			opt.IotapVersion, opt.Warn = version, e.warn
			opt.Input = func(_ string, size int64, r io.Reader) io.Reader {
				m.AddTotal(size)
				return m.Reader(r)
			}
			x, err := export.New(opt)
			if oe := (*export.OptionError)(nil); errors.As(err, &oe) {
				return usageErrorf("%v", err)
			} else if err != nil {
				return err
			}
			lost, err := x.ExportAll(e.ctx, args, func(r export.CaptureRow) { fmt.Fprintf(e.stderr, "iotap: export: %s\n", r) })
			if we := (*cut.WindowError)(nil); errors.As(err, &we) {
				return usageErrorf("%v", err)
			} else if err != nil {
				return err
			}
			return allowLoss.check(e, "", lost, "recorded in the captures table; use --allow-loss to accept")
		},
	}
	f := c.Flags()
	f.StringVar(&opt.Dir, "parquet", "", "write Parquet tables under `DIR`")
	f.StringVar(&partition, "partition", "", "Hive-style partition keys: host, date or host,date")
	f.StringVar(&opt.Identity.Host, "host", "", "host name of the capture (identity column)")
	f.StringVar(&opt.Identity.BootID, "boot-id", "", "boot id of the captured system (/proc/sys/kernel/random/boot_id)")
	f.StringVar(&opt.Identity.KernelRelease, "kernel-release", "", "kernel release of the captured system (uname -r)")
	f.StringVar(&opt.Identity.CaptureID, "capture-id", "", "capture id (default: a hash of the input's names, sizes and first bytes, host and boot id)")
	f.Int64Var(&opt.RowGroupRows, "row-group-rows", export.DefaultRowGroupRows, "rows per row group")
	f.BoolVar(&opt.KeepGoing, "keep-going", false, "skip unreadable text lines (counted as loss)")
	allowLoss.add(f, "exit 0 even when an input lost data")
	ptFileFlags(f, "Intel PT: ", &opt.PTSysroot, &opt.PTBuildIDDirs, nil, nil)
	window.add(f, "export only the records at or after `TIME` (see 'iotap cut --help')", windowToHelp, "")
	return c
}
