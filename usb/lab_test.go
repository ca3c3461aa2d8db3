package usb

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/vmlab"
	"github.com/iotap/iotap/usbmon"
)

// labDecodeScript captures the lab's USB traffic with iotap (mmap, the
// default) while the guest re-probes both storage devices (usb-storage
// unbind/bind: INQUIRY, READ CAPACITY, MODE SENSE, READ_10), reads them,
// types on the keyboard and hot-unplugs and replugs it (enumeration with
// its HID report descriptor), then rebinds the xHCI controller (root hub
// descriptors, BOS, everything behind it enumerates again). The guest's
// sysfs view of the USB devices is
// copied to /out/sysfs for the identity checks.
const labDecodeScript = `
lab_wait 60 sh -c 'ls /sys/block | grep -c ^sd | grep -qx 2'
lab_wait 60 sh -c 'cat /sys/bus/usb/devices/*/product | grep -qx "QEMU USB Tablet"'
sleep 2
iotap usb capture --no-inject-descriptors -o /tmp/lab.pcapng 2>/out/capture.err &
C=$!
sleep 3
for e in /dev/input/event*; do cat $e >/dev/null & echo $! >>/tmp/inputs; done
sleep 1
lab_monitor "sendkey a" >/dev/null
# Live pipeline: a second capture piped into iotap usb read, filtered by
# VID:PID known only from sysfs (these devices enumerated before it).
for d in /sys/bus/usb/devices/*; do
	if [ -f $d/idVendor ]; then echo "$(cat $d/busnum) $(cat $d/devnum) $(cat $d/idVendor):$(cat $d/idProduct)"; fi
done >/out/live-devices.txt
mkfifo /tmp/live
iotap usb capture --no-inject-descriptors -o /tmp/live 2>/out/live-capture.err &
L=$!
iotap usb read --sysfs /sys/bus/usb/devices --vidpid 0627:0001 /tmp/live >/out/live.txt 2>/out/live-read.err &
R=$!
sleep 2
lab_monitor "sendkey c" >/dev/null
lab_monitor "mouse_move 30 40" >/dev/null
sleep 1
kill -INT $L
rc=0; wait $R || rc=$?; echo $rc >/out/live-read.rc
wait $L || true
for i in /sys/bus/usb/drivers/usb-storage/*:*; do
	n=${i##*/}
	echo $n >/sys/bus/usb/drivers/usb-storage/unbind
	echo $n >/sys/bus/usb/drivers/usb-storage/bind
done
lab_wait 60 sh -c 'ls /sys/block | grep -c ^sd | grep -qx 2'
sleep 2
for d in /sys/block/sd*; do dd if=/dev/${d##*/} of=/dev/null bs=16k count=4 2>/dev/null; done
lab_monitor "device_del kbd0" >/dev/null
lab_wait 30 sh -c '! grep -qx "QEMU USB Keyboard" /sys/bus/usb/devices/*/product'
lab_monitor "device_add usb-kbd,id=kbd0,bus=xhci.0" >/dev/null
lab_wait 30 sh -c 'grep -qx "QEMU USB Keyboard" /sys/bus/usb/devices/*/product'
sleep 2
for e in /dev/input/event*; do cat $e >/dev/null & echo $! >>/tmp/inputs; done
sleep 1
lab_monitor "sendkey shift-b" >/dev/null
sleep 1
kill $(cat /tmp/inputs) 2>/dev/null || true
# Rebind the xHCI controller: its root hubs and every device behind it
# enumerate again (hub, SuperSpeed hub, BOS, device qualifier, tablet).
echo 0000:00:04.0 >/sys/bus/pci/drivers/xhci_hcd/unbind
sleep 1
echo 0000:00:04.0 >/sys/bus/pci/drivers/xhci_hcd/bind
lab_wait 60 sh -c 'grep -qx "QEMU USB Keyboard" /sys/bus/usb/devices/*/product'
lab_wait 60 sh -c 'grep -qx "QEMU USB Tablet" /sys/bus/usb/devices/*/product'
lab_wait 60 sh -c 'ls /sys/block | grep -c ^sd | grep -qx 2'
sleep 2
sleep 1
kill -INT $C
rc=0; wait $C || rc=$?; echo $rc >/out/capture.rc
cp /tmp/lab.pcapng /out/
for d in /sys/bus/usb/devices/*; do
	n=${d##*/}
	mkdir -p /out/sysfs/$n
	for f in busnum devnum idVendor idProduct bDeviceClass manufacturer product serial bInterfaceNumber bInterfaceClass; do
		if [ -f $d/$f ]; then cat $d/$f >/out/sysfs/$n/$f; fi
	done
done
true
`

func TestLabDecode(t *testing.T) {
	if testing.Short() {
		t.Skip("boots the lab VM")
	}
	res := vmlab.Run(t, vmlab.Machine{USB: true, Script: labDecodeScript})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (exit %d):\n%s", res.ExitCode, res.Console)
	}
	if rc := strings.TrimSpace(string(res.ReadOut(t, "capture.rc"))); rc != "0" {
		t.Fatalf("capture exited %s: %s", rc, res.ReadOut(t, "capture.err"))
	}
	pcap := filepath.Join(res.Out, "lab.pcapng")
	if dir := os.Getenv("IOTAP_USB_LAB_SAVE"); dir != "" {
		os.WriteFile(filepath.Join(dir, "decode-lab.pcapng"), res.ReadOut(t, "lab.pcapng"), 0o644)
	}
	evs := readAll(t, pcap)
	if len(evs) < 100 {
		t.Fatalf("only %d events captured", len(evs))
	}

	t.Run("tshark", func(t *testing.T) {
		rows := tsharkRows(t, pcap)
		if len(rows) != len(evs) {
			t.Fatalf("tshark sees %d frames, we read %d", len(rows), len(evs))
		}
		t.Logf("%d field comparisons", oracleCompare(t, evs, rows))
	})

	ids := NewIdentities()
	dec := NewDecoder(ids)
	p := NewPairer()
	seen := map[string]int{}
	for i, e := range evs {
		pr, ok := p.Add(e)
		if ok {
			ids.Observe(pr, e)
		}
		d := dec.Decode(e, pr, ok)
		if d.Err != nil {
			t.Errorf("event %d (%c %v dev %d): %s: %v", i+1, e.Type, e.Transfer, e.Device, d.Summary, d.Err)
		}
		for _, k := range []string{"REPORT items=", "apps=Keyboard", "CBW ", "INQUIRY alloc", "INQUIRY data: disk vendor=\"QEMU\"",
			"READ_CAPACITY_10", "CAPACITY blocks=32768 block_size=512", "READ_10 ", "MODE_SENSE", "CSW ", "SET_CONFIGURATION", "STRING \"QEMU USB Keyboard\"",
			"HID input: Left Shift keys=[Key b]", "HID input: Left Shift", "MODE data_length=",
			"BOS total=", "SUPERSPEED_USB", "SS_HUB ports=", "HUB ports=", "apps=Mouse", "STRING \"QEMU USB Tablet\""} {
			if strings.Contains(d.Summary, k) {
				seen[k]++
			}
		}
	}
	for _, k := range []string{"REPORT items=", "apps=Keyboard", "CBW ", "INQUIRY alloc", "INQUIRY data: disk vendor=\"QEMU\"",
		"READ_CAPACITY_10", "CAPACITY blocks=32768 block_size=512", "READ_10 ", "CSW ", "SET_CONFIGURATION", "STRING \"QEMU USB Keyboard\"",
		"HID input: Left Shift keys=[Key b]", "MODE data_length=", "BOS total=", "SUPERSPEED_USB", "SS_HUB ports=", "HUB ports="} {
		if seen[k] == 0 {
			t.Errorf("nothing decoded as %q", k)
		}
	}
	t.Logf("decoded: %v", seen)
	if seen["CBW "] != seen["CSW "] {
		t.Errorf("%d CBWs but %d CSWs", seen["CBW "], seen["CSW "])
	}

	// Identities learned from the capture agree with the guest's sysfs.
	sys, err := LoadSysfs(filepath.Join(res.Out, "sysfs"))
	if err != nil {
		t.Fatal(err)
	}
	matched := 0
	for _, s := range sys {
		c, ok := ids.Lookup(s.Bus, s.Device)
		if !ok || !c.HasID {
			continue
		}
		matched++
		if c.Vendor != s.Vendor || c.Product != s.Product || (c.ProductName != "" && c.ProductName != s.ProductName) {
			t.Errorf("bus %d dev %d: capture says %04x:%04x %q, sysfs %04x:%04x %q",
				s.Bus, s.Device, c.Vendor, c.Product, c.ProductName, s.Vendor, s.Product, s.ProductName)
		}
		for n, cl := range s.Interfaces {
			if got := c.InterfaceClass(n); got != cl {
				t.Errorf("bus %d dev %d interface %d: class %d from the capture, %d in sysfs", s.Bus, s.Device, n, got, cl)
			}
		}
		if s.ProductName == "QEMU USB Keyboard" && c.ProductName != s.ProductName {
			t.Errorf("replugged keyboard not identified from its enumeration: %+v", c)
		}
	}
	if matched == 0 {
		t.Error("no device identified from the capture")
	}
	kbd := false
	for _, s := range sys {
		if s.ProductName == "QEMU USB Keyboard" && s.InterfaceClass(0) == ClassHID {
			kbd = true
		}
	}
	if !kbd {
		t.Errorf("sysfs copy lacks the keyboard: %+v", sys)
	}

	t.Run("live-vidpid", func(t *testing.T) {
		if rc := strings.TrimSpace(string(res.ReadOut(t, "live-read.rc"))); rc != "0" {
			t.Fatalf("iotap usb read on the live pipe exited %s: %s %s", rc, res.ReadOut(t, "live-read.err"), res.ReadOut(t, "live-capture.err"))
		}
		// The devices with 0627:0001 in sysfs during the live phase
		// (the keyboard and the tablet).
		want := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(string(res.ReadOut(t, "live-devices.txt"))), "\n") {
			f := strings.Fields(l)
			if len(f) == 3 && f[2] == "0627:0001" {
				want[f[0]+":"+f[1]] = true
			}
		}
		if len(want) != 2 {
			t.Fatalf("sysfs during the live phase: %q", res.ReadOut(t, "live-devices.txt"))
		}
		got := map[string]int{}
		for _, l := range strings.Split(strings.TrimSpace(string(res.ReadOut(t, "live.txt"))), "\n") {
			f := strings.Fields(l)
			if len(f) < 4 {
				t.Fatalf("line %q", l)
			}
			a := strings.Split(f[3], ":") // Ii:2:003:1
			bus, _ := strconv.Atoi(a[1])
			dev, _ := strconv.Atoi(a[2])
			got[fmtBusDev(uint16(bus), uint8(dev))]++
		}
		for k := range got {
			if !want[k] {
				t.Errorf("events of %s passed the 0627:0001 filter (want %v)", k, want)
			}
		}
		if len(got) == 0 {
			t.Error("no event of the keyboard or tablet in the live pipeline")
		}
		t.Logf("live pipeline: events per device %v", got)
	})

	// Storage transfers complete without errors; the unplugged keyboard's
	// URBs are cancelled, not failed.
	st := NewStats()
	for _, e := range evs {
		st.Add(e)
	}
	for _, e := range st.Endpoints() {
		if e.Transfer == usbmon.Bulk && (e.Errors > 0 || e.Stalls > 0) {
			t.Errorf("bulk endpoint %d:%d %02x: %d errors %d stalls %v", e.Bus, e.Device, e.Endpoint, e.Errors, e.Stalls, e.Status)
		}
		if e.Transfer == usbmon.Bulk && e.Latency.Count() == 0 {
			t.Errorf("bulk endpoint %d:%d %02x: no latency", e.Bus, e.Device, e.Endpoint)
		}
	}
	if c := p.Counts(); c.Pairs == 0 || c.Overflow != 0 {
		t.Errorf("pairing %+v", c)
	}
}

func fmtBusDev(bus uint16, dev uint8) string {
	return strconv.Itoa(int(bus)) + ":" + strconv.Itoa(int(dev))
}
