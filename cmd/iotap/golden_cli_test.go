package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// cliGoldens are command lines over the bundled testdata whose complete
// output (exit status, stdout, stderr and any file written) is kept in
// testdata/golden/NAME.golden. They pin the CLI's behaviour byte for byte
// while its logic moves into the packages (issue 11): a change of output
// is a test failure. IOTAP_UPDATE_GOLDEN=1 rewrites the files; review the
// diff before committing.
//
// OUT in an argument stands for a file in a temporary directory; its
// bytes are part of the golden (as a SHA-256 when binary).
var cliGoldens = []struct {
	name string
	args []string
}{
	// USB: text 1u, pcapng and binary usbmon captures; read, stats, pair.
	{"usb-read-0u", []string{"usb", "read", "../../testdata/usbmon/lab-0u.txt"}},
	{"usb-read-0u-json", []string{"usb", "read", "--json", "../../testdata/usbmon/lab-0u.txt"}},
	{"usb-read-0u-hex", []string{"usb", "read", "-x", "../../testdata/usbmon/lab-capture.0u"}},
	{"usb-read-pcapng", []string{"usb", "read", "../../testdata/usbmon/lab-capture.pcapng"}},
	{"usb-read-pcapng-json", []string{"usb", "read", "--json", "../../testdata/usbmon/lab-capture.pcapng"}},
	{"usb-read-bin-json", []string{"usb", "read", "--json", "../../testdata/usbmon/lab-usbmon0.bin"}},
	{"usb-read-hidbus", []string{"usb", "read", "../../testdata/usbmon/lab-hidbus-t.txt"}},
	{"usb-read-filter-json", []string{"usb", "read", "--json", "--type", "ctrl", "--dir", "in", "../../testdata/usbmon/lab-capture.pcapng"}},
	{"usb-stats-0u", []string{"usb", "stats", "../../testdata/usbmon/lab-capture.0u"}},
	{"usb-stats-0u-json", []string{"usb", "stats", "--json", "../../testdata/usbmon/lab-capture.0u"}},
	{"usb-stats-pcapng", []string{"usb", "stats", "../../testdata/usbmon/lab-capture.pcapng"}},
	{"usb-stats-pcapng-json", []string{"usb", "stats", "--json", "../../testdata/usbmon/lab-capture.pcapng"}},
	{"usb-pair-0u", []string{"usb", "pair", "--unmatched", "../../testdata/usbmon/lab-capture.0u"}},
	{"usb-pair-0u-json", []string{"usb", "pair", "--json", "--unmatched", "../../testdata/usbmon/lab-capture.0u"}},
	{"usb-pair-pcapng", []string{"usb", "pair", "../../testdata/usbmon/lab-capture.pcapng"}},
	{"usb-pair-pcapng-json", []string{"usb", "pair", "--json", "../../testdata/usbmon/lab-capture.pcapng"}},
	{"usb-read-capture-dir", []string{"usb", "read", "--json", "../../testdata/capture/usb.pcapng"}},

	// MMIO: records of every kind, register names and statistics of the lab logs.
	{"mmio-read-kinds-json", []string{"mmio", "read", "--json", "--allow-loss", "../../mmiotrace/testdata/kinds.log"}},
	{"mmio-read-probe-json", []string{"mmio", "read", "--json", "-c", "40", "../../testdata/mmiotrace/e1000-probe.log"}},
	{"mmio-names-probe", []string{"mmio", "names", "../../testdata/mmiotrace/e1000-probe.log"}},
	{"mmio-names-probe-json", []string{"mmio", "names", "--json", "../../testdata/mmiotrace/e1000-probe.log"}},
	{"mmio-names-bind", []string{"mmio", "names", "../../mmiotrace/testdata/e1000-bind.log"}},
	{"mmio-stats-probe", []string{"mmio", "stats", "../../testdata/mmiotrace/e1000-probe.log"}},
	{"mmio-stats-probe-json", []string{"mmio", "stats", "--json", "../../testdata/mmiotrace/e1000-probe.log"}},
	{"mmio-stats-bind", []string{"mmio", "stats", "../../mmiotrace/testdata/e1000-bind.log"}},
	{"mmio-stats-capture", []string{"mmio", "stats", "--json", "../../testdata/capture/mmio.log.zst"}},
	{"mmio-read-check", []string{"mmio", "read", "--check", "../../testdata/capture/mmio.log.zst"}},
	{"mmio-read-check-cut", []string{"mmio", "read", "--check", "testdata/e1000-probe-cut.log"}},
	{"mmio-read-cut-allow", []string{"mmio", "read", "--allow-loss", "testdata/e1000-probe-cut.log", "-o", "OUT"}},
	{"mmio-read-json", []string{"mmio", "read", "--json", "../../mmiotrace/testdata/e1000-bind.log", "-o", "OUT"}},
	{"mmio-read-text", []string{"mmio", "read", "../../testdata/capture/mmio.log.zst", "-o", "OUT"}},
	{"mmio-filter-value", []string{"mmio", "filter", "--value", "0x80000000=0x80000000", "../../mmiotrace/testdata/e1000-bind.log"}},
	{"mmio-filter-value-bad", []string{"mmio", "filter", "--value", "0x1=0x3", "../../mmiotrace/testdata/e1000-bind.log"}},
	{"mmio-filter-window", []string{"mmio", "filter", "--from", "0.18s", "--to", "0.19s", "../../mmiotrace/testdata/e1000-bind.log"}},
	{"mmio-filter-window-mark", []string{"mmio", "filter", "--from", "mark:iotap: bind 0000:00:03.0 e1000", "--to", "0.1845s", "../../mmiotrace/testdata/e1000-bind.log"}},
	{"mmio-filter-window-abs", []string{"mmio", "filter", "--from", "@8.3", "--to", "@8.31", "../../mmiotrace/testdata/e1000-bind.log"}},
	{"mmio-filter-window-stdin", []string{"mmio", "filter", "--from", "0.1s", "-"}},
	{"mmio-filter-window-bad", []string{"mmio", "filter", "--from", "mark:nosuchmarker", "../../mmiotrace/testdata/e1000-bind.log"}},
	{"mmio-replay-dry", []string{"mmio", "replay", "--dry-run", "--check-reads", "../../mmiotrace/testdata/e1000-bind.log"}},
	{"mmio-replay-dry-json", []string{"mmio", "replay", "--dry-run", "--json", "--check-reads", "../../mmiotrace/testdata/e1000-bind.log"}},
	{"mmio-replay-dry-bar-json", []string{"mmio", "replay", "--dry-run", "--json", "--bar", "0000:00:03.0/0+0x100..0x104", "../../mmiotrace/testdata/e1000-bind.log"}},

	// Pinned before the moves of issue 11 (habits): read's filter, count,
	// parallel and compressed paths; diff; names' database options.
	{"mmio-read-filter", []string{"mmio", "read", "-Y", `mmio.reg == "CTRL" && mmio.kind == "W"`, "../../mmiotrace/testdata/e1000-bind.log"}},
	{"mmio-read-filter-json-count", []string{"mmio", "read", "--json", "-c", "3", "-Y", "mmio.kind == \"R\"", "../../testdata/mmiotrace/e1000-probe.log"}},
	{"mmio-read-filter-bad", []string{"mmio", "read", "-Y", "mmio.nosuch == 1", "../../testdata/mmiotrace/e1000-probe.log"}},
	{"mmio-read-xz-check", []string{"mmio", "read", "--check", "../../mmiotrace/testdata/e1000-trace-file.log.xz"}},
	{"mmio-read-xz-count", []string{"mmio", "read", "-c", "12", "../../mmiotrace/testdata/e1000-trace-file.log.xz"}},
	{"mmio-read-workers", []string{"mmio", "read", "--workers", "2", "../../mmiotrace/testdata/e1000-bind.log", "-o", "OUT"}},
	{"mmio-read-workers-json", []string{"mmio", "read", "--json", "--workers", "3", "../../testdata/mmiotrace/e1000-probe.log", "-o", "OUT"}},
	{"mmio-read-kinds-loss", []string{"mmio", "read", "../../mmiotrace/testdata/kinds.log"}},
	{"mmio-read-nolog", []string{"mmio", "read", "../../testdata/usbmon/lab-capture.pcapng"}},
	{"mmio-diff-same", []string{"mmio", "diff", "../../testdata/mmiotrace/e1000-probe.log", "../../mmiotrace/testdata/e1000-bind.log"}},
	{"mmio-diff-kinds", []string{"mmio", "diff", "--allow-loss", "testdata/e1000-probe-cut.log", "../../mmiotrace/testdata/kinds.log"}},
	{"mmio-diff-kinds-all", []string{"mmio", "diff", "--all", "--allow-loss", "../../mmiotrace/testdata/kinds.log", "../../mmiotrace/testdata/kinds.log"}},
	{"mmio-diff-stdin-twice", []string{"mmio", "diff", "-", "-"}},
	{"mmio-diff-kinds-all-json", []string{"mmio", "diff", "--all", "--json", "../../mmiotrace/testdata/kinds.log", "../../mmiotrace/testdata/kinds.log"}},
	{"mmio-diff-kinds-json", []string{"mmio", "diff", "--json", "--allow-loss", "../../mmiotrace/testdata/kinds.log", "testdata/e1000-probe-cut.log"}},
	{"mmio-diff-too-different", []string{"mmio", "diff", "../../testdata/mmiotrace/e1000-probe.log", "../../mmiotrace/testdata/e1000-trace-file.log.xz"}},
	{"mmio-names-kinds-json", []string{"mmio", "names", "--json", "--allow-loss", "../../mmiotrace/testdata/kinds.log"}},
	{"mmio-names-db-bar", []string{"mmio", "names", "--db", "e1000", "--bar", "0000:00:03.0/0=E1000", "../../mmiotrace/testdata/e1000-bind.log", "-o", "OUT"}},
	{"mmio-names-yaml-variant", []string{"mmio", "names", "--db", "../../regdb/testdata/native.yaml", "--variant", "R2", "--bar", "0000:00:03.0/0=DEV", "--allow-loss", "../../mmiotrace/testdata/kinds.log"}},
	{"mmio-names-yaml-variant-json", []string{"mmio", "names", "--json", "--db", "../../regdb/testdata/native.yaml", "--variant", "R2", "--bar", "8086:100e/0=DEV", "../../mmiotrace/testdata/kinds.log"}},
	{"mmio-names-nodb", []string{"mmio", "names", "--db", "../../regdb/testdata/native.yaml", "../../testdata/mmiotrace/e1000-probe.log"}},
	{"mmio-names-bar-unused", []string{"mmio", "names", "--bar", "0000:00:09.0/0=E1000", "--allow-loss", "../../mmiotrace/testdata/kinds.log"}},
	{"mmio-names-bar-nodomain", []string{"mmio", "names", "--bar", "0000:00:03.0/0=NOPE", "../../mmiotrace/testdata/kinds.log"}},
	{"mmio-names-bar-bad", []string{"mmio", "names", "--bar", "0000:00:03.0=E1000", "../../mmiotrace/testdata/kinds.log"}},
	{"mmio-names-variant-nodb", []string{"mmio", "names", "--variant", "R2", "../../mmiotrace/testdata/kinds.log"}},
	{"mmio-names-variant-none", []string{"mmio", "names", "--db", "../../regdb/testdata/native.yaml", "--variant", "NOPE", "../../mmiotrace/testdata/kinds.log"}},
	{"mmio-names-db-missing", []string{"mmio", "names", "--db", "nosuchdb", "../../mmiotrace/testdata/kinds.log"}},
	{"mmio-stats-kinds", []string{"mmio", "stats", "--allow-loss", "../../mmiotrace/testdata/kinds.log"}},
	{"mmio-stats-kinds-nonames", []string{"mmio", "stats", "--no-names", "--top", "2", "../../mmiotrace/testdata/kinds.log"}},

	// events read: LinuxTracepoints' perf.data (file and pipe mode).
	{"events-read-perf", []string{"events", "read", "../../userevents/testdata/linuxtracepoints/perf.data"}},
	{"events-read-perf-json", []string{"events", "read", "--json", "../../userevents/testdata/linuxtracepoints/perf.data", "-o", "OUT"}},
	{"events-read-pipe-filter", []string{"events", "read", "-Y", `event.name == "sched_switch"`, "../../userevents/testdata/linuxtracepoints/pipe.data"}},
	{"events-read-pipe-filter-json", []string{"events", "read", "--json", "-Y", `event.name == "sched_switch"`, "../../userevents/testdata/linuxtracepoints/pipe.data"}},
	{"events-read-filter-bad", []string{"events", "read", "-Y", "event.name ==", "../../userevents/testdata/linuxtracepoints/pipe.data"}},
	{"events-read-notperf", []string{"events", "read", "../../mmiotrace/testdata/kinds.log"}},

	// A capture directory: clocks.json aligns the sources.
	{"timeline-capture-dir", []string{"timeline", "../../testdata/capture", "-o", "OUT"}},
	{"timeline-capture-dir-json", []string{"timeline", "--json", "../../testdata/capture", "-o", "OUT"}},
	{"timeline-capture-files-clocks", []string{"timeline", "--json", "--clocks", "../../testdata/capture/clocks.json",
		"../../testdata/capture/usb.pcapng", "../../testdata/capture/mmio.log.zst", "../../testdata/capture/events.ndjson", "-o", "OUT"}},
	{"timeline-unaligned", []string{"timeline", "../../testdata/usbmon/lab-capture.pcapng", "../../testdata/mmiotrace/e1000-probe.log", "-o", "OUT"}},
	{"timeline-mmio-db", []string{"timeline", "--db", "e1000", "../../mmiotrace/testdata/e1000-bind.log", "-o", "OUT"}},
}

func TestCLIGolden(t *testing.T) {
	for _, tc := range cliGoldens {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				if a == "OUT" {
					a = out
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
			if data, err := os.ReadFile(out); err == nil {
				goldenSection(&b, "OUT", string(data))
			}
			checkGoldenText(t, filepath.Join("testdata", "golden", tc.name+".golden"), "iotap "+strings.Join(tc.args, " "), b.String())
		})
	}
}

// goldenSection appends one output: as text when it is valid UTF-8 without
// NUL bytes, else as its size and SHA-256. Text over 64 KiB is kept as its
// SHA-256 and first 8 KiB of lines, to keep the repository small.
func goldenSection(b *strings.Builder, name, s string) {
	if len(s) > 64<<10 && utf8.ValidString(s) {
		head := s[:8<<10]
		head = head[:strings.LastIndexByte(head, '\n')+1]
		fmt.Fprintf(b, "--- %s (%d bytes, %d lines, the first %d lines shown) sha256 %x\n",
			name, len(s), strings.Count(s, "\n"), strings.Count(head, "\n"), sha256.Sum256([]byte(s)))
		b.WriteString(head)
		return
	}
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		fmt.Fprintf(b, "--- %s (%d bytes)\n%s", name, len(s), s)
		if s != "" && !strings.HasSuffix(s, "\n") {
			b.WriteString("\n--- (no newline at the end)\n")
		}
		return
	}
	fmt.Fprintf(b, "--- %s (%d bytes, binary) sha256 %x\n", name, len(s), sha256.Sum256([]byte(s)))
}

// checkGoldenText compares got, what the command what printed, with the
// golden file path, showing the lines that differ; IOTAP_UPDATE_GOLDEN=1
// writes got there instead (creating its directory).
func checkGoldenText(t *testing.T, path, what, got string) {
	t.Helper()
	if os.Getenv("IOTAP_UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (IOTAP_UPDATE_GOLDEN=1 writes it)", err)
	}
	if string(want) != got {
		t.Errorf("%s: output differs from %s (IOTAP_UPDATE_GOLDEN=1 rewrites it):\n%s", what, path, lineDiff(string(want), got))
	}
}
