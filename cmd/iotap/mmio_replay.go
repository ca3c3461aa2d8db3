package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/spf13/cobra"
)

// mmioBARTarget is a PCI device's BARs mapped for replay (Linux only).
type mmioBARTarget interface {
	mmiotrace.ReplayTarget
	Close() error
}

func newMMIOReplayCmd(e *env) *cobra.Command {
	var (
		dryRun, force, checkReads, keepGoing bool
		asJSON                               bool
		device, pace, startMark, stopMark    string
		logDevice                            string
		delay                                time.Duration
		addrs, bars                          []string
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

--json writes NDJSON instead: one {"type":"access"} object per access
printed by --dry-run, one {"type":"divergence"} per differing read, and a
final {"type":"summary"} (fields: docs/mmio.md).

Examples:
  iotap mmio replay --dry-run e1000.log
  iotap mmio replay --dry-run --json e1000.log | jq -r .offset
  iotap mmio replay --device 0000:00:03.0 --pace recorded --start-mark "probe" e1000.log
  iotap mmio replay --device 0000:00:03.0 --bar 0000:00:03.0/0+0x0..0x100 --check-reads e1000.log`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt := mmiotrace.ReplayOptions{StartMark: startMark, StopMark: stopMark, CheckReads: checkReads, KeepGoing: keepGoing}
			switch pace {
			case "fast", "":
				opt.Pacing = mmiotrace.PaceFast
			case "recorded":
				opt.Pacing = mmiotrace.PaceRecorded
			case "fixed":
				opt.Pacing, opt.Delay = mmiotrace.PaceFixed, delay
				if delay <= 0 {
					return usageErrorf("--pace fixed needs --delay")
				}
			default:
				return usageErrorf("--pace %q: want fast, recorded or fixed", pace)
			}
			for _, a := range addrs {
				r, err := mmiotrace.ParseAddrRange(a)
				if err != nil {
					return usageErrorf("--addr: %v", err)
				}
				opt.Ranges = append(opt.Ranges, r)
			}
			for _, b := range bars {
				br, err := mmiotrace.ParseBARRange(b)
				if err != nil {
					return usageErrorf("--bar: %v", err)
				}
				opt.BARs = append(opt.BARs, br)
			}
			var dev *mmiotrace.PCIAddr
			if device != "" {
				a, err := mmiotrace.ParsePCIAddr(device)
				if err != nil {
					return usageErrorf("--device: %v", err)
				}
				dev = &a
			}
			if !dryRun && dev == nil {
				return usageErrorf("replay needs --device PCIADDR (the target) or --dry-run")
			}
			in, err := mmioOpenInput(args[0])
			if err != nil {
				return err
			}
			defer in.Close()
			out := bufio.NewWriter(e.stdout)
			defer out.Flush()
			enc := json.NewEncoder(out)
			var target mmiotrace.ReplayTarget
			if dryRun {
				var last uint64
				opt.OnAccess = func(line int64, r *mmiotrace.Record, loc mmiotrace.Location) {
					last = r.Value
					if asJSON {
						enc.Encode(mmioReplayJSON{Type: "access", Line: line, Kind: r.Kind.String(), Width: r.Width,
							Device: loc.BAR.Addr.String(), BAR: loc.BAR.Index, Offset: mmioHex(loc.Offset), Phys: mmioHex(r.Phys), Value: mmioHex(r.Value)})
						return
					}
					fmt.Fprintf(out, "%s %d %s/%d+0x%x 0x%x 0x%x\n", r.Kind, r.Width, loc.BAR.Addr, loc.BAR.Index, loc.Offset, r.Phys, r.Value)
				}
				target = dryTarget{last: &last}
				opt.Device = dev
			} else {
				t, err := mmioOpenBARTarget(*dev, force)
				if err != nil {
					return err
				}
				defer t.Close()
				target = t
				opt.Device = dev
				if logDevice != "" {
					a, err := mmiotrace.ParsePCIAddr(logDevice)
					if err != nil {
						return usageErrorf("--log-device: %v", err)
					}
					opt.Device = &a
				}
				opt.OnDivergence = func(line int64, r *mmiotrace.Record, loc mmiotrace.Location, got uint64) {
					if asJSON {
						enc.Encode(mmioReplayJSON{Type: "divergence", Line: line, Kind: r.Kind.String(), Width: r.Width,
							Device: loc.BAR.Addr.String(), BAR: loc.BAR.Index, Offset: mmioHex(loc.Offset), Phys: mmioHex(r.Phys), Value: mmioHex(r.Value), Got: mmioHex(got)})
						return
					}
					fmt.Fprintf(out, "divergence: line %q: %s/%d+0x%x read 0x%x, recorded 0x%x\n", r.Line, loc.BAR.Addr, loc.BAR.Index, loc.Offset, got, r.Value)
				}
			}
			st, err := mmiotrace.Replay(e.ctx, in, target, opt)
			if err != nil {
				return err
			}
			if asJSON {
				enc.Encode(map[string]any{"type": "summary", "writes": st.Writes, "reads": st.Reads, "divergences": st.Divergences,
					"unmapped": st.Unmapped, "skipped": st.Skipped, "lost": st.Lost, "dry_run": dryRun})
			}
			fmt.Fprintf(e.stderr, "mmio replay: %d writes, %d reads checked, %d divergences, %d accesses outside known BARs\n", st.Writes, st.Reads, st.Divergences, st.Unmapped)
			if st.Divergences > 0 {
				out.Flush()
				return fmt.Errorf("mmio replay: %d reads differ from the recording", st.Divergences)
			}
			return nil
		},
	}
	f := c.Flags()
	f.BoolVar(&dryRun, "dry-run", false, "print the writes instead of executing them")
	f.StringVar(&device, "device", "", "target PCI device (0000:00:03.0)")
	f.StringVar(&logDevice, "log-device", "", "the device in the log whose accesses are replayed (default: --device)")
	f.BoolVar(&force, "force", false, "write even though a driver is bound to the device")
	f.StringVar(&pace, "pace", "fast", "fast, recorded (the log's timing) or fixed (--delay)")
	f.DurationVar(&delay, "delay", 0, "delay between accesses with --pace fixed")
	f.StringArrayVar(&addrs, "addr", nil, "only accesses in this physical range LO-HI")
	f.StringArrayVar(&bars, "bar", nil, "only accesses in this BAR range PCIADDR/BAR+LO..HI")
	f.StringVar(&startMark, "start-mark", "", "start after the MARK containing this text")
	f.StringVar(&stopMark, "stop-mark", "", "stop at the MARK containing this text")
	f.BoolVar(&checkReads, "check-reads", false, "also perform the recorded reads and report differing values")
	f.BoolVar(&keepGoing, "keep-going", false, "skip lines that do not parse")
	f.BoolVar(&asJSON, "json", false, "NDJSON output: one object per access (dry run) or divergence, then a summary")
	return c
}

// mmioReplayJSON is one access (dry run) or divergence of --json output.
type mmioReplayJSON struct {
	Type   string `json:"type"` // "access" or "divergence"
	Line   int64  `json:"line"`
	Kind   string `json:"kind"` // "W", or "R" with --check-reads
	Width  uint8  `json:"width"`
	Device string `json:"device"`
	BAR    int    `json:"bar"`
	Offset string `json:"offset"`
	Phys   string `json:"phys"`
	Value  string `json:"value"`         // recorded value
	Got    string `json:"got,omitempty"` // divergence: value read now
}

// mmioHex formats v as "0x…", the form the log uses.
func mmioHex(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

// dryTarget executes nothing; reads return the recorded value.
type dryTarget struct{ last *uint64 }

func (dryTarget) Write(int, uint64, int, uint64) error { return nil }
func (d dryTarget) Read(int, uint64, int) (uint64, error) {
	return *d.last, nil
}
