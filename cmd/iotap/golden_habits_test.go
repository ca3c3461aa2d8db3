package main

// Goldens pinned before the moves of usb read/stats/pair's input opening
// and the mmio pipelines into packages (issue 11, habits): error paths,
// loss, filters, windows and -c, which cliGoldens did not cover.
func init() {
	cliGoldens = append(cliGoldens, []struct {
		name string
		args []string
	}{
		{"usb-read-badline", []string{"usb", "read", "testdata/usb-badline.txt"}},
		{"usb-read-badline-keep", []string{"usb", "read", "--keep-going", "testdata/usb-badline.txt"}},
		{"usb-read-cut", []string{"usb", "read", "--json", "testdata/usb-cut.pcapng"}},
		{"usb-stats-cut-allow", []string{"usb", "stats", "--allow-loss", "testdata/usb-cut.pcapng"}},
		{"usb-pair-cut-json", []string{"usb", "pair", "--json", "testdata/usb-cut.pcapng"}},
		{"usb-read-not-usb", []string{"usb", "read", "../../testdata/mmiotrace/e1000-probe.log"}},
		{"usb-read-window", []string{"usb", "read", "--from", "8.3", "--to", "+30ms", "../../testdata/usbmon/lab-capture.pcapng"}},
		{"usb-read-window-wall-text", []string{"usb", "read", "--from", "2026-01-01T00:00:00Z", "../../testdata/usbmon/lab-0u.txt"}},
		{"usb-read-window-mark", []string{"usb", "read", "--from", "mark:nosuch", "../../testdata/usbmon/lab-capture.pcapng"}},
		{"usb-read-filter-count", []string{"usb", "read", "-c", "5", "-Y", "usb.transfer_type == 2", "../../testdata/usbmon/lab-capture.pcapng"}},
		{"usb-read-filter-bad", []string{"usb", "read", "-Y", "usb.nosuch == 1", "../../testdata/usbmon/lab-capture.pcapng"}},
		{"usb-read-vidpid", []string{"usb", "read", "--vidpid", "0627:0001", "--dir", "in", "../../testdata/usbmon/lab-capture.0u"}},
		{"usb-read-sysfs-missing", []string{"usb", "read", "--sysfs", "testdata/nosuchdir", "../../testdata/usbmon/lab-capture.0u"}},
		{"usb-stats-count-json", []string{"usb", "stats", "--json", "-c", "20", "../../testdata/usbmon/lab-capture.pcapng"}},
		{"usb-pair-count-unmatched", []string{"usb", "pair", "-c", "3", "--unmatched", "--ep", "1", "../../testdata/usbmon/lab-capture.0u"}},
		{"usb-read-workers-json", []string{"usb", "read", "--json", "--workers", "2", "../../testdata/usbmon/lab-capture.pcapng"}},
		{"mmio-read-symbols-bad", []string{"mmio", "read", "--symbols", "testdata/nosuch.tar.gz", "../../testdata/mmiotrace/e1000-probe.log"}},
		{"mmio-read-json-stdout-count", []string{"mmio", "read", "--json", "-c", "5", "../../testdata/capture/mmio.log.zst"}},
		{"mmio-read-cut-json", []string{"mmio", "read", "--json", "testdata/e1000-probe-cut.log", "-o", "OUT"}},
		{"mmio-read-cut-nokeep", []string{"mmio", "read", "--keep-going=false", "../../mmiotrace/testdata/kinds.log", "-o", "OUT"}},
		{"mmio-stats-cut", []string{"mmio", "stats", "testdata/e1000-probe-cut.log"}},
		{"mmio-diff-not-log", []string{"mmio", "diff", "../../testdata/mmiotrace/e1000-probe.log", "../../testdata/usbmon/lab-0u.txt"}},
		{"mmio-names-not-log", []string{"mmio", "names", "../../testdata/usbmon/lab-0u.txt", "-o", "OUT"}},
		{"mmio-names-cut-out", []string{"mmio", "names", "--allow-loss", "testdata/e1000-probe-cut.log", "-o", "OUT"}},
		{"query-missing", []string{"query", "testdata/nosuchexport"}},
	}...)
}
