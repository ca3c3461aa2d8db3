package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// The goldens of the commands whose logic moves out of cmd/iotap in issue
// 11 besides those of golden_cli_test.go: Intel PT (raw streams from
// libipt's corpus in intelpt/testdata/libipt, and a perf.data built by
// ptPerfData), usb convert (testdata/usb-cut.pcapng is the first 3,000
// bytes of lab-capture.pcapng; testdata/usb-badline.txt lab-0u.txt with a
// line that is not usbmon text after its 20th).
func init() {
	const pt = "../../intelpt/testdata/libipt/"
	cliGoldens = append(cliGoldens, []struct {
		name string
		args []string
	}{
		// pt stats: raw files (streamed), a byte range (read whole), a
		// perf.data of two CPUs, what is not a PT trace.
		{"pt-stats-raw", []string{"pt", "stats", "--allow-loss", pt + "dump-all-packets.pt"}},
		{"pt-stats-raw-json", []string{"pt", "stats", "--json", pt + "dump-all-packets.pt"}},
		{"pt-stats-raw-time", []string{"pt", "stats", "--nom-freq", "4", "--mtc-freq", "8", "--cpuid-0x15.eax", "1", "--cpuid-0x15.ebx", "4", pt + "cbr-tsc-tma-mtc-cyc.pt"}},
		{"pt-stats-range", []string{"pt", "stats", pt + "dump-all-packets.pt:0x0-0x80"}},
		{"pt-stats-range-json", []string{"pt", "stats", "--json", pt + "ovf.pt:0"}},
		{"pt-stats-range-outside", []string{"pt", "stats", pt + "ovf.pt:0x100"}},
		{"pt-stats-perfdata", []string{"pt", "stats", pt + "two-cpus.perf.data"}},
		{"pt-stats-perfdata-json", []string{"pt", "stats", "--json", pt + "two-cpus.perf.data"}},
		{"pt-stats-not-pt", []string{"pt", "stats", "../../testdata/usbmon/lab-capture.pcapng"}},
		{"pt-stats-no-psb", []string{"pt", "stats", pt + "call_direct-ret_compressed.bin"}},
		{"pt-stats-dir", []string{"pt", "stats", "../../testdata/capture"}},
		{"pt-stats-missing", []string{"pt", "stats", pt + "nosuchfile.pt"}},
		{"pt-dump-range", []string{"pt", "dump", "--no-sync", pt + "dump-all-packets.pt:0x0-0x40"}},
		{"pt-dump-range-no-psb", []string{"pt", "dump", pt + "dump-all-packets.pt:0x10-0x40"}},
		{"pt-dump-perfdata", []string{"pt", "dump", pt + "two-cpus.perf.data"}},
		{"pt-dump-perfdata-json", []string{"pt", "dump", "--json", pt + "two-cpus.perf.data"}},

		// pt calls over a raw trace and its code (--raw).
		{"pt-calls-raw", []string{"pt", "calls", "--raw", pt + "call_direct-ret_compressed.bin:0x100000", pt + "call_direct-ret_compressed.pt"}},
		{"pt-calls-raw-json", []string{"pt", "calls", "--json", "--raw", pt + "call_indirect-ret_uncompressed.bin:0x100000", pt + "call_indirect-ret_uncompressed.pt"}},
		{"pt-calls-raw-folded", []string{"pt", "calls", "--folded", "--raw", pt + "call_direct-ret_compressed.bin:0x100000", pt + "call_direct-ret_compressed.pt"}},
		{"pt-calls-raw-gap", []string{"pt", "calls", "--raw", pt + "call_direct-ret_compressed.bin:0x200000", pt + "call_direct-ret_compressed.pt"}},
		{"pt-calls-raw-gap-allow", []string{"pt", "calls", "--allow-loss", "--raw", pt + "call_direct-ret_compressed.bin:0x200000", pt + "call_direct-ret_compressed.pt"}},
		{"pt-calls-both", []string{"pt", "calls", "--json", "--folded", pt + "call_direct-ret_compressed.pt"}},
		{"pt-calls-missing", []string{"pt", "calls", pt + "nosuchfile.pt"}},

		// usb convert between every format, filtered, and its usage errors.
		{"usb-convert-pcapng-1u", []string{"usb", "convert", "--format", "1u", "../../testdata/usbmon/lab-capture.pcapng", "-o", "OUT"}},
		{"usb-convert-0u-pcapng", []string{"usb", "convert", "--format", "pcapng", "../../testdata/usbmon/lab-0u.txt", "-o", "OUT"}},
		{"usb-convert-bin-pcap-189", []string{"usb", "convert", "--format", "pcap", "--link-type", "189", "../../testdata/usbmon/lab-usbmon0.bin", "-o", "OUT"}},
		{"usb-convert-1t-filter", []string{"usb", "convert", "--format", "1t", "-Y", "usb.ep == 0x81", "../../testdata/usbmon/lab-capture.0u", "-o", "OUT"}},
		{"usb-convert-stdout", []string{"usb", "convert", "--to", "1u", "../../testdata/usbmon/lab-hidbus-t.txt", "-o", "-"}},
		{"usb-convert-no-format", []string{"usb", "convert", "../../testdata/usbmon/lab-0u.txt", "-o", "OUT"}},
		{"usb-convert-bad-link", []string{"usb", "convert", "--format", "pcap", "--link-type", "1", "../../testdata/usbmon/lab-0u.txt", "-o", "OUT"}},
		{"usb-convert-cut", []string{"usb", "convert", "--format", "1u", "testdata/usb-cut.pcapng", "-o", "OUT"}},
		{"usb-convert-cut-allow", []string{"usb", "convert", "--format", "1u", "--allow-loss", "testdata/usb-cut.pcapng", "-o", "OUT"}},
		{"usb-convert-badline", []string{"usb", "convert", "--format", "pcapng", "testdata/usb-badline.txt", "-o", "OUT"}},
		{"usb-convert-badline-keep", []string{"usb", "convert", "--format", "1u", "--keep-going", "testdata/usb-badline.txt", "-o", "OUT"}},
		{"usb-convert-not-usb", []string{"usb", "convert", "--format", "pcap", "../../testdata/mmiotrace/e1000-probe.log", "-o", "OUT"}},
	}...)
}

// ptFixturePerfData is intelpt/testdata/libipt/two-cpus.perf.data: CPU 0 a PSB,
// a TSC and a FUP, CPU 3 a PSB and an overflow.
func ptFixturePerfData() []byte {
	var a, b intelpt.Encoder
	a.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	a.Encode(intelpt.Packet{Kind: intelpt.KindTSC, Payload: 0x1000})
	a.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
	a.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCFull, Payload: 0x401000})
	b.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
	b.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
	b.Encode(intelpt.Packet{Kind: intelpt.KindOVF})
	return ptPerfData(map[uint32][]byte{0: a.Bytes(), 3: b.Bytes()}, 0)
}

// TestPTFixturePerfData: the committed perf.data is what ptFixturePerfData
// builds (IOTAP_UPDATE_GOLDEN=1 writes it).
func TestPTFixturePerfData(t *testing.T) {
	const path = "../../intelpt/testdata/libipt/two-cpus.perf.data"
	want := ptFixturePerfData()
	if os.Getenv("IOTAP_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from ptFixturePerfData (IOTAP_UPDATE_GOLDEN=1 rewrites it)", path)
	}
}
