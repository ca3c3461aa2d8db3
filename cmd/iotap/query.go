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
			views := export.ViewsSQL(args[0])
			if views == "" {
				return fmt.Errorf("query: %s: no table of an iotap export (run iotap export --parquet %s INPUT...)", args[0], args[0])
			}
			if len(args) == 1 {
				_, err := fmt.Fprintf(e.stdout, "duckdb -cmd %s\n", export.ShellQuote(strings.TrimSpace(views)))
				return err
			}
			_, err := fmt.Fprintf(e.stdout, "duckdb -c %s\n", export.ShellQuote(views+args[1]))
			return err
		},
	}
}
