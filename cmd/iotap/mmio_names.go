package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/iotap/iotap/internal/mapfile"
	"github.com/iotap/iotap/regdb"
	"github.com/spf13/cobra"
)

func newMMIONamesCmd(e *env) *cobra.Command {
	var (
		opt       regdb.NamerOptions
		out       outputFlag
		loss      lossFlag
		asJSON    bool
		keepGoing bool
	)
	c := &cobra.Command{
		Use:   "names [--db FILE|NAME] [--variant V] [--bar PCIADDR/N=DOMAIN] [--json] FILE",
		Short: "Name the registers of every MMIO access and decode the values into bitfields",
		Long: `Map every access of an mmiotrace log to a PCI device BAR (from the PCIDEV
and MAP records of the log), name the register and decode the value into
bitfields and enums, using a register database: envytools rnndb XML or the
native YAML form (--db FILE), or one shipped with iotap (--db e1000; without
--db the shipped database matching the device's PCI id is used).

Each line of the log is printed followed by " ; NAME = VALUE {FIELDS}" for
accesses, or one NDJSON object per access with --json. Accesses that cannot
be named (outside any BAR, in a BAR without a database, or at an offset the
database does not describe) are counted and reported on stderr at the end.

--bar binds a device BAR to a domain of the database explicitly, for
databases without PCI ids (rnndb XML): --bar 0000:00:03.0/0=E1000.
--variant selects database variants (rnndb varset/variants): V or SET=V.`,
		Example: `  iotap mmio names testdata/mmiotrace/e1000-probe.log
  iotap mmio names --db nv_mmio.xml --variant NV50 --bar 0000:01:00.0/0=NV_MMIO trace.log.xz
  iotap mmio names --json trace.log | jq 'select(.register == "IMC")'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := regdb.NewNamerFrom(opt)
			if errors.Is(err, regdb.ErrOption) {
				return usageErrorf("mmio names: %v", err)
			} else if err != nil {
				return err
			}
			in, err := mmioOpenMetered(e, "mmio names", args[0], true)
			if err != nil {
				return err
			}
			defer in.Close()
			// A log that cannot be read leaves no output (outputFlag.write).
			var lost []string
			named := false // the output was created: its errors say "mmio: ..." alone
			err = out.write(e, true, args[:1], func(w io.Writer) (err error) {
				named = true
				lost, err = n.NameInput(e.ctx, in, w, regdb.LogInput{File: args[0], Format: in.Format(), KeepGoing: keepGoing}, asJSON)
				return err
			})
			if err != nil && named && e.ctx.Err() == nil {
				return fmt.Errorf("mmio names: %w", mapfile.Named(args[0], err))
			} else if err != nil {
				return err
			}
			n.WriteSummary(e.stderr)
			return loss.mmioIn(e, args[0], lost)
		},
	}
	f := c.Flags()
	out.add(f, "-", "output file (- for stdout; .gz/.xz/.zst compress)")
	f.StringArrayVar(&opt.DBs, "db", nil, "register database: a file (rnndb XML or YAML) or a shipped name ("+strings.Join(regdb.Builtins(), ", ")+"); repeatable")
	f.StringVar(&opt.Variant, "variant", "", "database variant to apply: V or SET=V (comma-separated)")
	f.StringArrayVar(&opt.BARs, "bar", nil, "bind a BAR to a database domain: PCIADDR/N=DOMAIN or VENDOR:DEVICE/N=DOMAIN (repeatable)")
	f.BoolVar(&asJSON, "json", false, "write NDJSON, one object per access")
	f.BoolVar(&keepGoing, "keep-going", true, mmioKeepGoingHelp)
	loss.add(f, "exit 0 even when the log lost events or lines were skipped")
	return c
}
