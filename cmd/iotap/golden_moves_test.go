package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// More goldens pinned before the second round of issue 11's moves (pt
// dump's streamed path, pt flow, the timeline job, report's outputs):
// each command line's exit status, stdout, stderr and files written.
func init() {
	const pt = "../../intelpt/testdata/libipt/"
	cliGoldens = append(cliGoldens, []struct {
		name string
		args []string
	}{
		// pt dump: raw files are streamed; --json and --stream read whole.
		{"pt-dump-raw-lastip", []string{"pt", "dump", "--lastip", "--exec-mode", pt + "dump-all-packets.pt"}},
		{"pt-dump-raw-time", []string{"pt", "dump", "--time", "--time-delta", "--nom-freq", "4", "--mtc-freq", "8", "--cpuid-0x15.eax", "1", "--cpuid-0x15.ebx", "4", pt + "cbr-tsc-tma-mtc-cyc.pt"}},
		{"pt-dump-raw-json", []string{"pt", "dump", "--json", pt + "dump-all-packets.pt"}},
		{"pt-dump-raw-count", []string{"pt", "dump", "-c", "5", pt + "dump-all-packets.pt"}},
		{"pt-dump-ovf", []string{"pt", "dump", pt + "ovf.pt"}},
		{"pt-dump-stream", []string{"pt", "dump", "--stream", "3", pt + "two-cpus.perf.data"}},
		{"pt-dump-stream-none", []string{"pt", "dump", "--stream", "5", pt + "two-cpus.perf.data"}},
		{"pt-dump-not-pt", []string{"pt", "dump", "../../testdata/usbmon/lab-capture.pcapng"}},
		{"pt-dump-no-psb", []string{"pt", "dump", pt + "call_direct-ret_compressed.bin"}},
		{"pt-dump-dir", []string{"pt", "dump", "../../testdata/capture"}},
		{"pt-dump-missing", []string{"pt", "dump", pt + "nosuchfile.pt"}},
		{"pt-dump-time-tcal", []string{"pt", "dump", "--time", "--tcal", pt + "ovf.pt"}},
		{"pt-dump-cpu-bad", []string{"pt", "dump", "--cpu", "x", pt + "ovf.pt"}},
		{"pt-dump-range-bad", []string{"pt", "dump", pt + "ovf.pt:0x10000"}},
		{"pt-stats-ovf", []string{"pt", "stats", pt + "ovf.pt"}},

		// pt flow over raw code, and its sideband errors.
		{"pt-flow-raw", []string{"pt", "flow", "--raw", pt + "call_direct-ret_compressed.bin:0x100000", "--pt", pt + "call_direct-ret_compressed.pt"}},
		{"pt-flow-raw-json", []string{"pt", "flow", "--json", "--raw", pt + "call_indirect-ret_uncompressed.bin:0x100000", pt + "call_indirect-ret_uncompressed.pt"}},
		{"pt-flow-insn-stat", []string{"pt", "flow", "--insn-decoder", "--stat", "--stat:insn", "--event:ip", "--offset", "--raw", pt + "call_direct-ret_compressed.bin:0x100000", pt + "call_direct-ret_compressed.pt"}},
		{"pt-flow-blocks", []string{"pt", "flow", "--block:show-blocks", "--block:end-on-call", "--stat", "--stat:blocks", "--raw", pt + "call_direct-ret_compressed.bin:0x100000", pt + "call_direct-ret_compressed.pt"}},
		{"pt-flow-cpu-unknown", []string{"pt", "flow", "--cpu", "6/999", "--raw", pt + "call_direct-ret_compressed.bin:0x100000", pt + "call_direct-ret_compressed.pt"}},
		{"pt-flow-filter", []string{"pt", "flow", "--filter:addr0_cfg", "1", "--filter:addr0_a", "0x100000", "--filter:addr0_b", "0x100010", "--raw", pt + "call_direct-ret_compressed.bin:0x100000", pt + "call_direct-ret_compressed.pt"}},
		{"pt-flow-filter-bad", []string{"pt", "flow", "--filter:addr1_cfg", "16", "--raw", pt + "call_direct-ret_compressed.bin:0x100000", pt + "call_direct-ret_compressed.pt"}},
		{"pt-flow-no-image", []string{"pt", "flow", pt + "call_direct-ret_compressed.pt"}},
		{"pt-flow-no-trace", []string{"pt", "flow", "--raw", pt + "call_direct-ret_compressed.bin:0x100000"}},
		{"pt-flow-twice", []string{"pt", "flow", "--pt", pt + "ovf.pt", pt + "ovf.pt"}},
		{"pt-flow-perfdata", []string{"pt", "flow", pt + "two-cpus.perf.data"}},
		{"pt-flow-perfdata-stream", []string{"pt", "flow", "--stream", "1", "--pid", "7", pt + "two-cpus.perf.data"}},
		{"pt-flow-missing", []string{"pt", "flow", pt + "nosuchfile.pt"}},
		{"pt-calls-perfdata", []string{"pt", "calls", pt + "two-cpus.perf.data"}},

		// Decoding errors that skip bytes are loss (exit 3 unless
		// --allow-loss): a PSB, a PSBEND, then 2,000 random bytes.
		{"pt-stats-noise", []string{"pt", "stats", "testdata/pt-psb-noise.pt"}},
		{"pt-stats-noise-json-allow", []string{"pt", "stats", "--json", "--allow-loss", "testdata/pt-psb-noise.pt"}},
		{"pt-dump-noise", []string{"pt", "dump", "testdata/pt-psb-noise.pt"}},
		{"pt-dump-noise-allow", []string{"pt", "dump", "--allow-loss", "testdata/pt-psb-noise.pt"}},
		{"pt-dump-noise-json", []string{"pt", "dump", "--json", "testdata/pt-psb-noise.pt"}},
		{"pt-dump-noise-range", []string{"pt", "dump", "testdata/pt-psb-noise.pt:0"}},
		{"pt-flow-noise", []string{"pt", "flow", "--raw", pt + "call_direct-ret_compressed.bin:0x100000", "testdata/pt-psb-noise.pt"}},
		{"pt-flow-noise-allow", []string{"pt", "flow", "--allow-loss", "--raw", pt + "call_direct-ret_compressed.bin:0x100000", "testdata/pt-psb-noise.pt"}},

		// timeline: the split export, a time window, stdout, errors.
		{"timeline-max-size", []string{"timeline", "--max-size", "300KiB", "../../testdata/mmiotrace/e1000-probe.log", "-o", "OUT"}},
		{"timeline-max-size-json", []string{"timeline", "--json", "--max-size", "300KiB", "../../testdata/mmiotrace/e1000-probe.log", "-o", "OUT"}},
		{"timeline-window", []string{"timeline", "--from", "0.1s", "--to", "+50ms", "--max-size", "0", "../../testdata/mmiotrace/e1000-probe.log", "-o", "OUT"}},
		{"timeline-stdout", []string{"timeline", "--db", "e1000", "../../mmiotrace/testdata/e1000-bind.log", "-o", "-"}},
		{"timeline-bandwidth-bad", []string{"timeline", "--bandwidth-window", "0", "../../testdata/capture", "-o", "OUT"}},
		{"timeline-dir-missing", []string{"timeline", "../../testdata/capture", "nosuchfile", "-o", "OUT"}},
		{"timeline-empty-dir", []string{"timeline", "../../testdata/perfetto", "-o", "OUT"}},
		{"timeline-db-missing", []string{"timeline", "--db", "nosuchdb", "../../testdata/capture", "-o", "OUT"}},
		{"timeline-not-trace", []string{"timeline", "../../testdata/capture/README.md", "-o", "OUT"}},
		{"timeline-pt", []string{"timeline", pt + "two-cpus.perf.data", pt + "cbr-tsc-tma-mtc-cyc.pt", "-o", "OUT"}},
	}...)
}

// TestReportOutputsGolden pins report's -o outputs (HTML, NDJSON, a
// Perfetto trace, split or not) with the text it prints: OUT.EXT in an
// argument is a file in a temporary directory, kept in the golden (as a
// SHA-256 when binary), with the files of a split timeline's OUT.d.
func TestReportOutputsGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"report-capture-outputs", []string{"report", "../../testdata/capture", "-o", "OUT.pftrace", "-o", "OUT.json"}},
		{"report-capture-html", []string{"report", "--allow-loss", "-v", "../../testdata/capture", "../../mmiotrace/testdata/kinds.log", "-o", "OUT.html", "-o", "OUT.pftrace"}},
		{"report-split", []string{"report", "--max-size", "300KiB", "../../testdata/mmiotrace/e1000-probe.log", "-o", "OUT.pftrace", "-o", "OUT.html"}},
		{"report-format", []string{"report", "--format", "json", "../../testdata/capture/usb.pcapng", "-o", "OUT.x"}},
		{"report-kind-bad", []string{"report", "../../testdata/capture", "-o", "OUT.x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := make([]string, len(tc.args))
			var outs []string
			for i, a := range tc.args {
				if strings.HasPrefix(a, "OUT.") {
					a = filepath.Join(dir, a)
					outs = append(outs, a)
				}
				args[i] = a
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), args, &stdout, &stderr)
			code := exitCode(err, &stderr)
			var b strings.Builder
			fmt.Fprintf(&b, "# iotap %s\nexit %d\n", strings.Join(tc.args, " "), code)
			goldenSection(&b, "stdout", strings.ReplaceAll(stdout.String(), dir, "TMP"))
			goldenSection(&b, "stderr", strings.ReplaceAll(stderr.String(), dir, "TMP"))
			for _, o := range outs {
				if data, err := os.ReadFile(o); err == nil {
					goldenSection(&b, filepath.Base(o), strings.ReplaceAll(string(data), dir, "TMP"))
				}
			}
			if ents, err := os.ReadDir(filepath.Join(dir, "OUT.d")); err == nil {
				for _, e := range ents {
					data, _ := os.ReadFile(filepath.Join(dir, "OUT.d", e.Name()))
					goldenSection(&b, "OUT.d/"+e.Name(), strings.ReplaceAll(string(data), dir, "TMP"))
				}
			}
			checkGoldenText(t, filepath.Join("testdata", "golden", tc.name+".golden"), "iotap "+strings.Join(tc.args, " "), b.String())
		})
	}
}
