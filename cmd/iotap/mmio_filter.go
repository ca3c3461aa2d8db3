package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/spf13/cobra"
)

func newMMIOFilterCmd(e *env) *cobra.Command {
	var (
		a              mmiotrace.FilterArgs
		opt            mmiotrace.FilterOptions
		window         windowFlags
		out            outputFlag
		allowLoss      lossFlag
		between, until string
		verbose        bool
	)
	c := &cobra.Command{
		Use: "filter [flags] FILE",
		Example: `  iotap mmio filter --write --bar 0000:00:03.0/0+0x0..0x100 e1000.log
  iotap mmio filter --from 12.3 --to 12.5 -o window.log.zst e1000.log
  iotap mmio filter --between probe --until ready --kind R,W e1000.log.gz`,
		Short: "Select records of an mmiotrace log, keeping it valid",
		Long: `Select records of an mmiotrace log. The criteria combine with AND; repeated
--addr/--bar/--map-id/--width values combine with OR. Address, width, value
and map criteria apply to accesses (R, W, UNKNOWN).

The records needed to interpret the result are always kept: VERSION, PCIDEV,
LSPCI, MAP, UNMAP, comments and the kernel's "Lost N events." marks. Kept
lines are copied byte for byte, in order. Without --between the log is
parsed in parallel on all cores.

--from/--to (or --time LO..HI) keep the records of a time window as
'iotap cut' does (see its help for the times): the log is cut in-process,
seeking with its index, so only the window is read; the records before the
window that interpret it are kept, nothing after its end. Standard input
is read whole and takes @T ends only.

Examples:
  iotap mmio filter --write --width 4 --addr 0xfebc0000-0xfebc0100 log.txt -o w.txt
  iotap mmio filter --bar 0000:00:04.0/0+0x0..0x100 log.txt.xz
  iotap mmio filter --bar 8086:100e/0+0xd8 --value 0x4=0x4 log.txt
  iotap mmio filter --between "X is up" "X is down" log.txt`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := a.Filter()
			if err != nil {
				return usageErrorf("%v", err)
			}
			spec, err := window.spec("mmio filter")
			if err != nil {
				return err
			}
			if spec.NeedsWall() {
				return usageErrorf("mmiotrace timestamps are seconds of the kernel's clock, not wall-clock times: give @T (the log's stamps), seconds from its start or mark:NAME")
			}
			if between != "" {
				f.Between[0] = between
				f.Between[1] = until
				if len(args) == 2 && until == "" {
					// --between START END FILE
					f.Between[1], args = args[0], args[1:]
				}
			}
			if len(args) != 1 {
				return usageErrorf("filter takes one log file")
			}
			// standard input is not cut: its records are kept by their @T stamps
			in, err := mmioOpenLog(e, "mmio filter", args[0], cut.LogOptions{Window: spec, Stamps: true})
			if err != nil {
				return err
			}
			defer in.Close()
			var st mmiotrace.FilterStats
			var lost []string
			m := e.meter("iotap: mmio filter", -1, out.stdout())
			opt.Progress = m.Progress()
			// Interrupted, what was kept so far is a valid log: kept.
			err = out.write(e, true, args[:1], func(w io.Writer) (err error) {
				st, lost, err = in.Filter(e.ctx, w, f, opt)
				return err
			})
			m.Done()
			if errors.Is(err, mmiotrace.ErrFormat) {
				return fmt.Errorf("mmio filter: %w", err) // as mmio stats: "iotap: mmio filter: FILE: mmiotrace: line N: ..."
			}
			if err != nil {
				return err
			}
			if verbose {
				fmt.Fprintf(e.stderr, "iotap: mmio filter: kept %d of %d lines\n", st.Kept, st.Lines)
			}
			return allowLoss.mmioIn(e, args[0], lost)
		},
	}
	fl := c.Flags()
	out.add(fl, "-", "output file (- for stdout; .gz/.xz/.zst compress)")
	fl.StringSliceVar(&a.Kinds, "kind", nil, "keep only these record kinds (R,W,UNKNOWN,MARK,other)")
	fl.BoolVar(&a.Read, "read", false, "keep reads (same as --kind R)")
	fl.BoolVar(&a.Write, "write", false, "keep writes (same as --kind W)")
	fl.IntSliceVar(&a.Widths, "width", nil, "access width in bytes (1, 2, 4, 8)")
	fl.StringVar(&a.Value, "value", "", "MASK=BITS: keep accesses whose value&MASK == BITS (MASK alone: all MASK bits set)")
	fl.StringArrayVar(&a.Addrs, "addr", nil, "physical address range LO-HI or LO..HI ([LO,HI)), or one address")
	fl.StringArrayVar(&a.BARs, "bar", nil, "BAR-relative range PCIADDR/BAR+LO..HI or VENDOR:DEVICE/BAR+LO..HI")
	fl.Int32SliceVar(&a.MapIDs, "map-id", nil, "map id of the accesses")
	window.add(fl, "only records at or after `TIME`: seconds from the log's first record (0.5, 500ms), @T as the log prints it (@12.5), or mark:NAME (see 'iotap cut --help')",
		windowToHelp, windowTimeHelp)
	fl.StringVar(&between, "between", "", "keep records from the MARK containing this text…")
	fl.StringVar(&until, "until", "", "…to the MARK containing this text (or give it as the next argument)")
	workersVar(fl, &opt.Workers, "parsing goroutines (0: all cores)")
	fl.BoolVar(&opt.KeepGoing, "keep-going", true, mmioKeepGoingHelp)
	allowLoss.add(fl, "exit 0 even when events were lost or lines skipped")
	fl.BoolVarP(&verbose, "verbose", "v", false, "print how many lines were kept")
	return c
}
