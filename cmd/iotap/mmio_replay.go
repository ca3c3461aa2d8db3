package main

import (
	"bufio"
	"fmt"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/spf13/cobra"
)

func newMMIOReplayCmd(e *env) *cobra.Command {
	var (
		a      mmiotrace.ReplayArgs
		asJSON bool
		window windowFlags
		loss   lossFlag
	)
	c := &cobra.Command{
		Use: "replay [flags] FILE",
		Example: `  iotap mmio replay --dry-run --device 0000:00:03.0 e1000.log
  sudo iotap mmio replay --device 0000:00:03.0 --pace recorded --start-mark probe --check-reads e1000.log`,
		Short: "Re-execute the recorded writes of an mmiotrace log on a PCI device",
		Long: `Re-execute the writes of a log, each with its recorded width (1, 2, 4 or 8
bytes), in log order, on the BARs of a PCI device mapped through sysfs
(/sys/bus/pci/devices/ADDR/resourceN). Accesses are located by BAR and
offset using the log's PCIDEV records, so the target may sit at another
physical address than in the log.

--dry-run only prints the writes ("W width PCIADDR/BAR+OFFSET phys value").
A device bound to a driver is refused unless --force. --check-reads also
performs the recorded reads and reports values that differ.

--from/--to replay only the accesses of a time window (seconds from the
log's first record, @T as the log prints it, mark:NAME: 'iotap cut --help'),
cut in-process, seeking with the log's index; the MAP and PCIDEV records
before the window are kept, so its accesses are located as in the log.

--json writes NDJSON instead (docs/ndjson.md): an "input" record, one
mmio_replay_access record per access printed by --dry-run, one
mmio_replay_divergence per differing read, and a final mmio_replay_summary.

Exit status 3 when the log lost records (lost events, a last line cut
short, bad lines skipped with --keep-going), unless --allow-loss.

Examples:
  iotap mmio replay --dry-run e1000.log
  iotap mmio replay --dry-run --json e1000.log | jq -r 'select(.kind == "mmio_replay_access") | .offset'
  iotap mmio replay --device 0000:00:03.0 --pace recorded --start-mark "probe" e1000.log
  iotap mmio replay --dry-run --from 'mark:probe' --to +10ms e1000.log
  iotap mmio replay --device 0000:00:03.0 --bar 0000:00:03.0/0+0x0..0x100 --check-reads e1000.log`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt, err := a.Options()
			if err != nil {
				return usageErrorf("%v", err)
			}
			spec, err := window.spec("mmio replay")
			if err != nil {
				return err
			}
			in, err := mmioOpenLog(e, "mmio replay", args[0], cut.LogOptions{Window: spec})
			if err != nil {
				return err
			}
			defer in.Close()
			out := bufio.NewWriter(e.stdout)
			defer out.Flush()
			st, err := in.Replay(e.ctx, &a, opt, mmiotrace.NewReplayPrinter(out, asJSON))
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "iotap: mmio replay: %s\n", st)
			if st.Divergences > 0 {
				out.Flush()
				return fmt.Errorf("mmio replay: %d reads differ from the recording", st.Divergences)
			}
			return loss.mmioIn(e, args[0], st.Loss)
		},
	}
	f := c.Flags()
	f.BoolVar(&a.DryRun, "dry-run", false, "print the writes instead of executing them")
	f.StringVar(&a.Device, "device", "", "target PCI device (0000:00:03.0)")
	f.StringVar(&a.LogDevice, "log-device", "", "the device in the log whose accesses are replayed (default: --device)")
	f.BoolVar(&a.Force, "force", false, "write even though a driver is bound to the device")
	f.StringVar(&a.Pace, "pace", "fast", "fast, recorded (the log's timing) or fixed (--delay)")
	f.DurationVar(&a.Delay, "delay", 0, "delay between accesses with --pace fixed")
	f.StringArrayVar(&a.Addrs, "addr", nil, "only accesses in this physical range LO-HI")
	f.StringArrayVar(&a.BARs, "bar", nil, "only accesses in this BAR range PCIADDR/BAR+LO..HI")
	f.StringVar(&a.StartMark, "start-mark", "", "start after the MARK containing this text")
	f.StringVar(&a.StopMark, "stop-mark", "", "stop at the MARK containing this text")
	f.BoolVar(&a.CheckReads, "check-reads", false, "also perform the recorded reads and report differing values")
	f.BoolVar(&a.KeepGoing, "keep-going", false, "skip lines that do not parse")
	window.add(f, "replay only the accesses at or after `TIME` (see 'iotap cut --help')", windowToHelp, "")
	f.BoolVar(&asJSON, "json", false, "NDJSON output: one object per access (dry run) or divergence, then a summary")
	loss.add(f, "exit 0 even when the log records lost events, is cut or had bad lines skipped")
	return c
}
