package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/iotap/iotap/detect"
	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/regdb"
	"github.com/spf13/cobra"
)

func newMMIOReadCmd(e *env) *cobra.Command {
	var (
		opt  mmiotrace.ReadOptions
		out  outputFlag
		loss lossFlag
		syms symbolsFlag
		expr string
	)
	c := &cobra.Command{
		Use: "read FILE",
		Example: `  iotap mmio read --check e1000.log.zst
  iotap mmio read --json -c 20 e1000.log | jq 'select(.kind == "mmio_access") | .phys'
  iotap mmio read --symbols e1000.tar.gz e1000.log -o e1000.txt
  iotap mmio read -Y 'mmio.reg == "CTRL" && mmio.kind == "W"' e1000.log`,
		Short: "Read an mmiotrace log (plain, .gz, .xz, .zst) and rewrite, convert or check it",
		Long: `Read an mmiotrace log and write it back in the kernel's text format (byte for
byte for a kernel log), compressed when -o ends in .gz, .xz or .zst, or as
NDJSON with --json. --check only parses and prints a summary.

-Y EXPR prints only the records a display-filter expression selects
(mmio.kind, mmio.addr, mmio.value, mmio.width, mmio.reg, mmio.bar,
mmio.offset, ...: docs/filters.md); the output is then a selection of
lines, not a log to read again (see 'iotap mmio filter' for that).

Lost events (the kernel's "Lost N events." marks) and skipped bad lines
(--keep-going) make the command exit 3 unless --allow-loss.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			meter := e.meter("iotap: mmio read", -1, !opt.Check && out.stdout())
			var err error
			if opt.Symbols, err = syms.load(e.warn); err != nil {
				return err
			}
			if expr != "" {
				if opt.Keep, err = regdb.ParseFilter(expr, &regdb.Binder{}); err != nil {
					return usageErrorf("-Y: %v", err)
				}
			}
			in, err := mmioOpenInput(args[0])
			if err != nil {
				return err
			}
			defer in.Close()
			opt.File, opt.Format, opt.Size, opt.Path = args[0], in.Format(), in.Size(), args[0]
			if meter != nil {
				meter.SetTotal(opt.Size)
				opt.Progress = meter.Update
			}
			var lost []string
			read := func(w io.Writer) (err error) {
				lost, err = mmiotrace.ReadLog(e.ctx, in, w, opt)
				return err
			}
			if opt.Check {
				err = e.endOutput(func() error { return nil }, read(e.stdout)) // the summary
			} else {
				err = out.write(e, true, args[:1], read)
			}
			if errors.Is(err, mmiotrace.ErrFormat) {
				return fmt.Errorf("mmio read: %w", err) // as mmio stats: "iotap: mmio read: FILE: mmiotrace: line N: ..."
			}
			if err != nil {
				return err
			}
			return loss.mmioIn(e, args[0], lost)
		},
	}
	f := c.Flags()
	out.add(f, "-", "output file (- for stdout; .gz/.xz/.zst compress)")
	f.BoolVar(&opt.JSON, "json", false, "write NDJSON, one object per record")
	syms.add(f, " (text output: the name after a tab; --json: \"func\")")
	f.BoolVar(&opt.Check, "check", false, "only parse the whole log and print a summary")
	workersVar(f, &opt.Workers, "parsing goroutines (0: all cores for a plain log file of 4 MiB or more, or a compressed or piped one on more than 2 cores; else 1)")
	f.Uint64VarP(&opt.Count, "count", "c", 0, "stop after `N` records, like tshark -c (0: all)")
	f.StringVarP(&expr, "filter", "Y", "", "print only the records matching the display-filter `EXPR` (docs/filters.md)")
	f.BoolVar(&opt.KeepGoing, "keep-going", true, mmioKeepGoingHelp)
	loss.add(f, "exit 0 even when events were lost or lines skipped")
	return c
}

// mmioOpenInput opens a log file ("-" is standard input) and checks that
// it is one (detect.OpenTrace): anything else is an error saying what it is.
func mmioOpenInput(path string) (*detect.Input, error) {
	in, err := detect.OpenTrace(path, detect.MMIO)
	if err != nil {
		return nil, fmt.Errorf("mmio: %w", err)
	}
	return in, nil
}

// mmioOpenMetered is mmioOpenInput with the bytes read (decompressed)
// shown by a progress meter of the job what (busy: it prints records on
// stdout as it reads, see env.meter).
func mmioOpenMetered(e *env, what, path string, busy bool) (*detect.Input, error) {
	in, err := mmioOpenInput(path)
	if err != nil {
		return nil, err
	}
	in.Reader = e.meter("iotap: "+what, -1, busy).Reader(in.Reader)
	return in, nil
}

// mmioCreateOutput creates path through e.createOutput, compressed
// according to its extension. The closer flushes and commits it.
func mmioCreateOutput(e *env, path string, mode outfile.Mode, inputs ...string) (io.Writer, func() error, error) {
	file, err := e.createOutput(path, mode, inputs...)
	if err != nil {
		return nil, nil, fmt.Errorf("mmio: %w", err)
	}
	zw, err := mmiotrace.NewCompressWriter(file, mmiotrace.CompressionFromName(path))
	if err != nil {
		return nil, nil, err
	}
	return zw, func() error {
		if err := zw.Close(); err != nil {
			return err
		}
		return file.Commit()
	}, nil
}

const mmioKeepGoingHelp = "skip lines that do not parse, counted and reported with the first's line number (exit 3 unless --allow-loss); =false stops at the first"
