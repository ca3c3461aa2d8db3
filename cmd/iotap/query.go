package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/export"
)

func newQueryCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "query DIR [SQL]",
		Short: "Print the duckdb command that runs SQL over an export's Parquet tables",
		Long: `iotap has no SQL engine of its own (an embedded one would need cgo): query
prints the duckdb command line that defines one view per table of an
'iotap export --parquet DIR' tree (usb_transfers, mmio_accesses, ...) and
runs SQL over them. Without SQL, the command opens duckdb's shell with the
views defined. Run it, or paste it: duckdb is at duckdb.org.`,
		Example: `  iotap query out "SELECT vidpid, count(*), quantile_cont(latency_ns, 0.99) FROM usb_transfers GROUP BY ALL"
  eval "$(iotap query out 'SELECT name, count(*) FROM user_events GROUP BY name')"`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			line, err := export.DuckDBCommand(args[0], strings.Join(args[1:], "")) // SQL, if given
			if err == nil {
				_, err = fmt.Fprintln(e.stdout, line)
			}
			return err
		},
	}
}
