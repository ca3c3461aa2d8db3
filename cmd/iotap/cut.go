package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/internal/outfile"
	"github.com/spf13/cobra"
)

// timeWindowHelp is the one description of --from/--to of cut, index and
// timeline.
const timeWindowHelp = `Times (--from, --to; the window is [from, to)):
  1.5  200ms  1m30s       from the capture's start (its first timed record)
  +2s                     (--to only) 2 s after --from
  @12.345678              the trace's own clock as it prints it (mmiotrace and
                          usbmon text stamps, pcap epoch seconds, events ts/1e9)
  2026-11-25T12:00:00Z    wall clock (pcap, pcapng)
  mark:NAME               the first marker named NAME (else the first whose text
                          starts with NAME): mmiotrace MARK lines, iotap_marker
                          user events`

func newCutCmd(e *env) *cobra.Command {
	var (
		window    windowFlags
		out       outputFlag
		allowLoss lossFlag
		noIndex   bool
	)
	c := &cobra.Command{
		Use:   "cut --from T --to T INPUT -o OUT",
		Short: "Write the part of a trace inside a time window, in the input's format",
		Long: `Write to OUT the records of INPUT inside [--from, --to), in INPUT's own format
(pcapng, pcap, usbmon text, mmiotrace log, user_events NDJSON, raw Intel PT, Intel PT in perf.data),
with what a reader needs to interpret them: file and interface headers, the
mmiotrace VERSION/PCIDEV/MAP lines before the window; for Intel PT the PSB
segments the window touches, from a PSB (its PSB+ state) on, timed by the
TSC/MTC packets (and a capture directory's capture.json). A window with no events is a
valid file of headers only. Loss inside the window stays in it (mmiotrace
"Lost N events." lines; pcapng interface statistics, made relative to the
window's start); it makes the exit code 3 unless --allow-loss.

With INPUT.iotapidx (iotap index INPUT) only the window is read; a stale
index is ignored with a warning. Compressed inputs are read from the start.

` + timeWindowHelp,
		Example: `  iotap cut --from 10 --to 11 capture.pcapng -o second10.pcapng
  iotap cut --from 'mark:probe done' --to +2s mmio.log -o probe.log
  iotap cut --from @12.3 --to @12.5 mmio.log -o - | iotap mmio stats /dev/stdin`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageErrorf("cut: give the output file with -o (- for standard output)")
			}
			spec, err := window.spec("")
			if err != nil {
				return err
			}
			f, err := out.create(e, outfile.Atomic, args[0], args[0]+cut.IndexSuffix)
			if err != nil {
				return err
			}
			res, err := cut.CutFile(e.ctx, args[0], f, !noIndex, e.meterAt("iotap: cut"), cut.Options{Window: spec, Warn: e.warn})
			if err != nil && e.ctx.Err() != nil {
				return e.interrupted(err)
			} else if we := (*cut.WindowError)(nil); errors.As(err, &we) {
				return usageErrorf("cut: %v", err)
			} else if err != nil {
				return err
			}
			if err := f.Commit(); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "iotap: cut: %s\n", res.Summary(args[0], spec))
			return allowLoss.check(e, "cut: "+args[0]+": ", res.LostInWindow(), res.LossHint(string(out)))
		},
	}
	fl := c.Flags()
	window.add(fl, "keep records at or after `TIME` (see Times)", windowToHelp, "")
	out.add(fl, "", "write the cut to `FILE` (- for standard output)")
	fl.BoolVar(&noIndex, "no-index", false, "do not use INPUT.iotapidx: read the input from its start")
	allowLoss.add(fl, "exit 0 even when the window records lost events")
	return c
}

func newIndexCmd(e *env) *cobra.Command {
	var (
		interval  int64
		allowLoss lossFlag
	)
	c := &cobra.Command{
		Use:   "index INPUT",
		Short: "Write INPUT.iotapidx, so that cut seeks to a time window instead of reading from the start",
		Long: `Read INPUT once and write the sidecar index INPUT.iotapidx: a checkpoint
(time -> byte offset) every --interval bytes, the header records a window
needs, the markers and per-source event counts (docs/cut.md describes the
versioned format). 'iotap cut' uses it to read little more than the window.
The index records INPUT's size, modification time and the checksums of the
bytes it points at: when INPUT changes, the index is ignored with a warning.
Compressed inputs cannot be indexed (decompress them first).

An INPUT that ends inside a record (a capture killed mid-write) is indexed
all the same, up to that record, and the index written, as tcpdump reads the
packets of a cut file before it says the file is cut; the truncation is said
and the exit code is 3 unless --allow-loss (a cut of a window holding the
half record counts it as a lost event).`,
		Example: `  iotap index capture.pcapng && iotap cut --from 3600 --to 3601 capture.pcapng -o s.pcapng`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if interval < 64<<10 {
				return usageErrorf("--interval %d: at least 65536 bytes", interval)
			}
			summary, err := cut.WriteIndexFile(e.ctx, args[0], interval, e.meterAt("iotap: index"), e.createFile)
			var trunc *cut.TruncatedError
			if err != nil && e.ctx.Err() != nil {
				return e.interrupted(err)
			} else if err != nil && !errors.As(err, &trunc) {
				return err
			}
			fmt.Fprintln(e.stdout, summary)
			if trunc != nil {
				return allowLoss.check(e, "index: ", []string{trunc.Error()}, "use --allow-loss to accept")
			}
			return nil
		},
	}
	c.Flags().Int64Var(&interval, "interval", cut.DefaultInterval, "bytes between checkpoints")
	allowLoss.add(c.Flags(), "exit 0 even when INPUT ends inside a record")
	return c
}

// meterAt is a progress meter of the job what over a file read at
// offsets (cut.CutFile, cut.WriteIndexFile).
func (e *env) meterAt(what string) func(io.ReaderAt, int64) io.ReaderAt {
	return func(r io.ReaderAt, size int64) io.ReaderAt { return e.meter(what, size, false).ReaderAt(r) }
}
