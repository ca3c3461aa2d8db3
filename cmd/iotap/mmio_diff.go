package main

import (
	"github.com/iotap/iotap/mmiotrace"
	"github.com/spf13/cobra"
)

func newMMIODiffCmd(e *env) *cobra.Command {
	var (
		format   mmiotrace.DiffFormat
		loss     lossFlag
		maxEdits int
	)
	c := &cobra.Command{
		Use: "diff [flags] A B",
		Example: `  iotap mmio diff good.log bad.log
  iotap mmio diff --json --max-edits 10000 good.log.zst bad.log.zst | jq 'select(.kind == "mmio_diff_summary")'`,
		Short: "Align two mmiotrace logs by register sequence and show the differences",
		Long: `Compare the register accesses of two logs, ignoring timestamps and map ids.
Accesses are named PCIADDR/BAR+OFFSET (or by physical address outside known
BARs); runs of identical reads are collapsed (xN). The sequences are aligned
by register (kind, width, location) with Myers' algorithm; the output shows

  - A:LINE ...        only in A
  + B:LINE ...        only in B
  ~ A:LINE B:LINE ... same register, other value or repeat count

and, with --all, the identical accesses too. A summary ends the output,
counting every access of both logs.

The logs are read side by side and only a window of each is held (memory
does not grow with the logs): where they differ, Myers' algorithm runs on
the next 32,768 accesses of each (up to 262,144) until 64 accesses agree
again. Differences separated by such runs, and those within the last
window, are aligned as Myers' algorithm aligns the whole logs. Elsewhere
(differences wider than the window, or runs that agree by chance, as in
periodic polling) the alignment is still correct (applied to A it gives B)
but may have more insertions and deletions than the shortest or put equal
ones elsewhere. --max-edits gives up beyond N insertions and deletions;
nothing is printed then (the output is held until the end, beyond 4 MiB
in a temporary file). As before, a block only in one log, when it is the
only difference, is taken whatever its length (docs/mmio.md says when the
window may miss it).

--json writes NDJSON: an "input" record per log, one "mmio_diff" record per
line above ("op" is "same", "changed", "only_a" or "only_b") and a final
"mmio_diff_summary" (fields: docs/ndjson.md).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "-" && args[1] == "-" {
				return usageErrorf("mmio diff: standard input can be one of the two logs, not both")
			}
			var logs [2]*mmiotrace.DiffLog
			for i, p := range args {
				// Both are read at once: each progress line names its log.
				in, err := mmioOpenMetered(e, "mmio diff "+p, p, false)
				if err != nil {
					return err
				}
				defer in.Close()
				logs[i] = mmiotrace.NewDiffLog(in, p, in.Format())
			}
			err := mmiotrace.DiffLogs(e.stdout, logs[0], logs[1], maxEdits, format)
			var lossErr error // reported after the diff of what was read
			for i, p := range args {
				if lerr := loss.mmioIn(e, p, logs[i].Loss); lerr != nil && lossErr == nil {
					lossErr = lerr
				}
			}
			if err != nil {
				return err
			}
			return lossErr
		},
	}
	c.Flags().BoolVar(&format.All, "all", false, "also print identical accesses")
	c.Flags().IntVar(&maxEdits, "max-edits", 4000, "give up beyond this many insertions and deletions")
	loss.add(c.Flags(), "exit 0 even when a log is cut, lost events or had bad lines skipped")
	c.Flags().BoolVar(&format.JSON, "json", false, "NDJSON output: one object per difference (with --all, per access), then a summary")
	return c
}
