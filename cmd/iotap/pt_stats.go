package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/report"
)

func newPTStatsCmd(e *env) *cobra.Command {
	var (
		asJSON, allowLoss  bool
		workers            int
		mtc, nom           uint8
		cpuidEAX, cpuidEBX uint32
	)
	c := &cobra.Command{
		Use:   "stats [flags] FILE",
		Short: "Summarise a PT trace: packets by kind, PSB spacing, overflows, errors, time span",
		Long: `Summarise a PT trace (raw or perf.data, one summary per CPU stream): bytes,
packets by kind, PSB count and spacing in bytes, overflows (OVF: the CPU
dropped trace data), decoding errors with their offsets, bytes skipped
(before the first PSB, after errors, truncated tail) and the TSC span.

The time span is estimated like 'pt dump --time': TSC packets, plus TMA/MTC
when --mtc-freq and --cpuid-0x15.eax/ebx are known and CYC once calibrated
(perf.data and capture.json record these parameters).
Exit status 3 when the CPU or perf lost data (OVF, truncated tail, perf
loss records) unless --allow-loss.`,
		Example: `  iotap pt stats trace.pt
  iotap pt stats --json perf.data`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if br, closeFn, ok, err := ptRawReader(args[0]); err != nil {
				return err
			} else if ok {
				// A raw file: summarised as it is read.
				defer closeFn()
				base, _ := intelpt.ConfigOf(args[0])
				cfg := ptConfig(cmd, base, mtc, nom, cpuidEAX, cpuidEBX)
				var s intelpt.Stats
				if f, size, ok := ptSegmentable(args[0], workers); ok {
					// Large enough to decode in segments between PSBs on
					// several cores (same result, intelpt.ComputeStatsFile).
					defer f.Close()
					ra := e.meter("iotap: pt stats", size, false).ReaderAt(ptCtxReaderAt{e, f})
					s, err = intelpt.ComputeStatsFile(ra, size, cfg, workers)
				} else {
					s, err = intelpt.ComputeStatsReader(e.ptReader("iotap: pt stats", args[0], br, false), cfg)
				}
				if err != nil {
					return fmt.Errorf("pt stats: %s: %w", args[0], err)
				}
				return ptStatsReport(e, args[0], []ptStatsItem{{name: args[0], cpu: -1, s: s}}, nil, asJSON, allowLoss)
			}
			t, err := ptLoad(e, args[0])
			if err != nil {
				return err
			}
			cfg := ptConfig(cmd, t.Config(), mtc, nom, cpuidEAX, cpuidEBX)
			var items []ptStatsItem
			for _, in := range t.Streams {
				items = append(items, ptStatsItem{name: ptName(in, args[0]), cpu: in.CPU, s: intelpt.ComputeStats(in.Data, cfg)})
			}
			return ptStatsReport(e, args[0], items, t.Perf, asJSON, allowLoss)
		},
	}
	fl := c.Flags()
	fl.BoolVar(&asJSON, "json", false, "one JSON object per stream")
	fl.BoolVar(&allowLoss, "allow-loss", false, "exit 0 even when data was lost")
	fl.IntVar(&workers, "workers", 0, "decoding goroutines, each on a segment between PSBs (0: all cores for a raw trace of 16 MiB or more on more than 2 cores, else 1)")
	fl.Uint8Var(&mtc, "mtc-freq", 0, "MTC frequency `n` (IA32_RTIT_CTL[17:14])")
	fl.Uint8Var(&nom, "nom-freq", 0, "nominal core:bus ratio `n`")
	fl.Uint32Var(&cpuidEAX, "cpuid-0x15.eax", 0, "CPUID[0x15].EAX")
	fl.Uint32Var(&cpuidEBX, "cpuid-0x15.ebx", 0, "CPUID[0x15].EBX")
	return c
}

type ptStatsItem struct {
	name string
	cpu  int32
	s    intelpt.Stats
}

func ptStatsReport(e *env, file string, items []ptStatsItem, tr *intelpt.PerfTrace, asJSON, allowLoss bool) error {
	var lost []string
	var b []byte
	if asJSON {
		format := intelpt.FormatRaw
		if tr != nil {
			format = intelpt.FormatPerfData
		}
		b = intelpt.AppendInputNDJSON(b, file, format, "")
	}
	for i := range items {
		it := &items[i]
		if asJSON {
			b = intelpt.AppendStatsNDJSON(b, "", it.name, it.cpu, &it.s)
		} else {
			report.WritePTText(e.stdout, it.name, &it.s)
		}
		if it.s.Overflows > 0 {
			lost = append(lost, fmt.Sprintf("%s: %d overflow(s)", it.name, it.s.Overflows))
		}
		if it.s.Truncated {
			lost = append(lost, fmt.Sprintf("%s: truncated tail", it.name))
		}
	}
	if _, err := e.stdout.Write(b); err != nil {
		return err
	}
	if l := tr.LossSummary(); l != "" {
		lost = append(lost, l)
	}
	if len(lost) > 0 && !allowLoss {
		return dataLostError("pt stats: data lost: %v (--allow-loss to accept)", lost)
	}
	return nil
}
