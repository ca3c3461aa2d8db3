package usb

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/vmlab"
)

// TestLabInjectDescriptors starts two captures after the USB disks and
// the HID devices enumerated, one with the injected descriptors (the
// default) and one without, while the guest reads a disk and a key is
// typed: tshark decodes HID only in the first and more SCSI there, and the injected
// device descriptors are byte for byte what the guest's sysfs holds.
func TestLabInjectDescriptors(t *testing.T) {
	if testing.Short() {
		t.Skip("boots the lab VM")
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed (apt-get install tshark)")
	}
	res := vmlab.Run(t, vmlab.Machine{USB: true, Script: `
lab_wait 60 sh -c 'ls /sys/block | grep -c ^sd | grep -qx 2'
lab_wait 60 sh -c 'cat /sys/bus/usb/devices/*/product | grep -qx "QEMU USB Tablet"'
sleep 2
for e in /dev/input/event*; do cat $e >/dev/null & done
iotap usb capture -o /out/inj.pcapng 2>/out/inj.err &
A=$!
iotap usb capture --no-inject-descriptors -o /out/raw.pcapng 2>/out/raw.err &
B=$!
sleep 3
dd if=/dev/sda of=/dev/null bs=4k count=8 iflag=direct 2>/dev/null
lab_monitor "sendkey a" >/dev/null
sleep 2
kill -INT $A $B; wait $A; echo $? >/out/inj.rc; wait $B
for d in /sys/bus/usb/devices/*; do [ -f $d/descriptors ] && head -c 18 $d/descriptors | od -An -tx1 | tr -d ' \n' && echo; done >/out/devdesc.txt
`})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (exit %d):\n%s", res.ExitCode, res.Console)
	}
	if rc := strings.TrimSpace(string(res.ReadOut(t, "inj.rc"))); rc != "0" {
		t.Fatalf("capture exit %s: %s", rc, res.ReadOut(t, "inj.err"))
	}
	t.Logf("capture stderr: %s", res.ReadOut(t, "inj.err"))
	count := func(file, filter string) int {
		out, err := exec.Command("tshark", "-r", filepath.Join(res.Out, file), "-Y", filter, "-T", "fields", "-e", "frame.number").Output()
		if err != nil {
			t.Fatalf("tshark %s %s: %v", file, filter, err)
		}
		return len(strings.Fields(string(out)))
	}
	// tshark's heuristic finds the CBWs ("USBC") without descriptors, but
	// the data and status stages and HID reports need them.
	for _, f := range []string{"scsi", "usbhid"} {
		inj, raw := count("inj.pcapng", f), count("raw.pcapng", f)
		t.Logf("%s frames: %d with injection, %d without", f, inj, raw)
		if inj <= raw || (f == "usbhid" && raw != 0) {
			t.Errorf("%s: %d frames decoded with injection, %d without", f, inj, raw)
		}
	}
	if n := count("raw.pcapng", "frame.comment"); n != 0 {
		t.Errorf("%d commented frames without injection", n)
	}
	// Device descriptors: the injected completions hold what the guest's
	// sysfs holds, byte for byte.
	want := strings.Fields(string(res.ReadOut(t, "devdesc.txt")))
	got := 0
	inj, _ := readAllLab(t, filepath.Join(res.Out, "inj.pcapng"))
	for _, d := range inj {
		if len(d) == 36 {
			for _, w := range want {
				if d == w {
					got++
				}
			}
		}
	}
	if got != len(want) || len(want) == 0 {
		t.Errorf("%d of %d sysfs device descriptors found byte for byte in the injected events", got, len(want))
	}
}

// readAllLab returns the hex data of the synthesized completions of path.
func readAllLab(t *testing.T, path string) ([]string, error) {
	var out []string
	for _, e := range readAll(t, path) {
		if e.Synthesized && e.Type == 'C' {
			out = append(out, hexOf(e.Data))
		}
	}
	return out, nil
}
