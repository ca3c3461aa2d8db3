package vmlab

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// usbmonSampleScript records the kernel's own usbmon output while the
// lab's USB devices work: both disks are read with dd, the keyboard and
// the tablet get input through the QEMU monitor, and the keyboard is
// unplugged and plugged back (enumeration). Everything lands in
// /out/usbmon.
const usbmonSampleScript = `
mkdir -p /out/usbmon
m=/sys/kernel/debug/usb/usbmon
# The bus of the keyboard and tablet (xHCI USB 2 root hub).
kbdbus=$(cat $(dirname $(grep -lx "QEMU USB Keyboard" /sys/bus/usb/devices/*/product))/busnum)
echo "$kbdbus" >/out/usbmon/kbdbus
# Open the input devices so that usbhid polls the interrupt endpoints.
for e in /dev/input/event*; do cat "$e" >/dev/null & done
cat $m/0u >/out/usbmon/0u.txt &
u=$!
cat $m/${kbdbus}t >/out/usbmon/1t.txt &
tt=$!
cat /dev/usbmon0 >/out/usbmon/usbmon0.bin &
b=$!
iotap usb capture --no-inject-descriptors --bus 0 --ring-size 1200K -o /out/usbmon/all.pcapng 2>/out/usbmon/capture.stderr &
ic=$!
# Start the traffic only once the capture runs (a fixed second was too
# short on a loaded host under TCG).
lab_wait 60 grep -q "iotap: capturing" /out/usbmon/capture.stderr
sleep 1
for d in /sys/block/sd*; do dd if=/dev/${d##*/} of=/dev/null bs=16k count=4 iflag=direct 2>/dev/null; done
lab_monitor "sendkey a" >/dev/null
lab_monitor "sendkey shift-b" >/dev/null
lab_monitor "mouse_move 100 200" >/dev/null
lab_monitor "mouse_button 1" >/dev/null
lab_monitor "mouse_button 0" >/dev/null
lab_monitor "device_del kbd0"
lab_wait 30 sh -c '! grep -qx "QEMU USB Keyboard" /sys/bus/usb/devices/*/product'
lab_monitor "device_add usb-kbd,id=kbd0,bus=xhci.0"
lab_wait 30 sh -c 'grep -qx "QEMU USB Keyboard" /sys/bus/usb/devices/*/product'
sleep 1
kill $u $tt $b
kill -INT $ic
wait $u $tt $b || true
wait $ic && echo 0 >/out/usbmon/capture.rc || echo $? >/out/usbmon/capture.rc
cat $m/0s >/out/usbmon/0s.txt
for d in /sys/bus/usb/devices/*-*; do
	case $d in *:*) continue ;; esac
	echo "$(cat $d/busnum):$(cat $d/devnum) $(cat $d/idVendor):$(cat $d/idProduct) speed $(cat $d/speed) $(cat $d/product) ($(readlink -f $d | sed 's|/sys/devices/||'))"
done >/out/usbmon/devices.txt
`

// mmiotraceSampleScript records mmiotrace while the e1000 driver is
// unbound from and bound to the NIC again, so that its probe (ioremap,
// then reads and writes) is traced, with markers around it; the guest's
// PCI devices and dmesg go beside it.
const mmiotraceSampleScript = `
mkdir -p /out/mmiotrace
cd /sys/kernel/tracing
echo 4096 >buffer_size_kb
echo mmiotrace >current_tracer
cat trace_pipe >/out/mmiotrace/e1000-probe.log &
p=$!
sleep 1
echo "vmlab: unbind and bind e1000 ` + E1000PCI + `" >trace_marker
echo ` + E1000PCI + ` >/sys/bus/pci/drivers/e1000/unbind
echo ` + E1000PCI + ` >/sys/bus/pci/drivers/e1000/bind
echo "vmlab: e1000 bound" >trace_marker
# Wait for the reader to drain the marker (a fixed sleep was too short on a
# loaded host under TCG).
lab_wait 60 grep -q "vmlab: e1000 bound" /out/mmiotrace/e1000-probe.log
# The tracer cannot change while trace_pipe is open (EBUSY): stop the
# reader first.
kill $p
wait $p || true
echo nop >current_tracer
cd /sys/bus/pci/devices
for d in *; do
	echo "$d class $(cat $d/class) vendor $(cat $d/vendor) device $(cat $d/device) driver $(basename "$(readlink $d/driver)" 2>/dev/null)"
	grep -v '^0x0000000000000000 0x0000000000000000' $d/resource | sed 's/^/  resource /'
done >/out/mmiotrace/e1000-probe.pci.txt
dmesg >/out/mmiotrace/e1000-probe.dmesg.txt
`

// TestLabSamples records the bundled samples (testdata/usbmon,
// testdata/mmiotrace at the module root) and checks that they hold what
// they should; the pcapng file of iotap usb capture, recorded at the same
// time, is checked with tshark but not kept. With IOTAP_RECORD_SAMPLES=1
// it also writes the samples there (see testdata/usbmon/README.md: golden
// files of other packages are derived from them).
func TestLabSamples(t *testing.T) {
	res := Run(t, Machine{USB: true, NIC: true, Script: usbmonSampleScript + mmiotraceSampleScript})
	if res.ExitCode != 0 {
		t.Fatalf("recording script failed (exit %d):\n%s", res.ExitCode, tail(res.Console, 40))
	}
	text := func(name string) string { return string(res.ReadOut(t, name)) }

	u := text("usbmon/0u.txt")
	for _, re := range []string{
		`(?m) S Ci:\d+:\d+:0 s 80 06 0100 0000 0012 18 <$`,  // GET_DESCRIPTOR(device) of the re-plugged keyboard
		`(?m) C Ii:\d+:\d+:1 0:\d+ 8 = 00000400`,            // key "a" pressed (usage 0x04)
		`(?m) C Bi:\d+:\d+:\d+ 0 16384 = 766d6c61 62206431`, // 16 KiB read from disk d1 ("vmlab d1")
		`(?m) C Bi:\d+:\d+:\d+ 0 16384 = 766d6c61 62206430`, // and from disk d0 (dd iflag=direct)
		`(?m) S Bo:\d+:\d+:\d+ -115 31 = 55534243`,          // a mass storage CBW ("USBC")
	} {
		if !regexp.MustCompile(re).MatchString(u) {
			t.Errorf("usbmon 0u capture lacks %s", re)
		}
	}
	if s := text("usbmon/0s.txt"); !strings.Contains(s, "text_lost 0") {
		t.Errorf("usbmon text API lost events during the recording: %s", s)
	}
	if tt := text("usbmon/1t.txt"); !regexp.MustCompile(`(?m) S Ci:\d+:00 s 80 06 0100 0000 0012 18 <$`).MatchString(tt) {
		t.Errorf("usbmon 1t capture lacks the keyboard's enumeration")
	}
	if b := res.ReadOut(t, "usbmon/usbmon0.bin"); len(b) < 2*4*16384 {
		t.Errorf("binary usbmon0 capture holds %d bytes, less than the disk data read", len(b))
	}

	if rc := strings.TrimSpace(text("usbmon/capture.rc")); rc != "0" {
		t.Errorf("iotap usb capture exited %s in the guest: %s", rc, text("usbmon/capture.stderr"))
	} else {
		if !checkPcapng(t, filepath.Join(res.Out, "usbmon/all.pcapng")) {
			t.Logf("iotap usb capture's stderr in the guest:\n%s", text("usbmon/capture.stderr"))
		}
	}

	m := text("mmiotrace/e1000-probe.log")
	for _, re := range []string{
		`(?m)^VERSION 20070824$`,
		`(?m)^PCIDEV 0018 8086100e `,
		`(?m)^MARK \S+ vmlab: unbind and bind e1000`,
		`(?m)^MAP \S+ \d+ 0x[0-9a-f]+ 0x[0-9a-f]+ 0x20000 `,
		`(?m)^R 4 \S+ \d+ 0x[0-9a-f]+ 0x[0-9a-f]+`,
		`(?m)^W 4 \S+ \d+ 0x[0-9a-f]+ 0x[0-9a-f]+`,
		`(?m)^MARK \S+ vmlab: e1000 bound`,
	} {
		if !regexp.MustCompile(re).MatchString(m) {
			t.Errorf("mmiotrace log lacks %s", re)
		}
	}
	if strings.Contains(m, "LOST") || strings.Contains(text("mmiotrace/e1000-probe.dmesg.txt"), "mmiotrace: Lost") {
		t.Errorf("mmiotrace lost events during the recording")
	}

	if os.Getenv("IOTAP_RECORD_SAMPLES") != "1" {
		return
	}
	root := filepath.Join(moduleRoot(t), "testdata")
	for f, name := range map[string]string{
		"usbmon/0u.txt":                   "usbmon/lab-0u.txt",
		"usbmon/1t.txt":                   "usbmon/lab-hidbus-t.txt",
		"usbmon/0s.txt":                   "usbmon/lab-0s.txt",
		"usbmon/usbmon0.bin":              "usbmon/lab-usbmon0.bin",
		"usbmon/devices.txt":              "usbmon/lab-devices.txt",
		"mmiotrace/e1000-probe.log":       "mmiotrace/e1000-probe.log",
		"mmiotrace/e1000-probe.pci.txt":   "mmiotrace/e1000-probe.pci.txt",
		"mmiotrace/e1000-probe.dmesg.txt": "mmiotrace/e1000-probe.dmesg.txt",
	} {
		dst := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, res.ReadOut(t, f), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %s", dst)
	}
}

// checkPcapng checks the pcapng file of iotap usb capture with tshark, the
// reference reader: it must hold the keyboard's enumeration and the disks'
// data. Without tshark only its magic is checked.
func checkPcapng(t *testing.T, file string) bool {
	t.Helper()
	ok := true
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 4 || string(b[:4]) != "\x0a\x0d\x0d\x0a" {
		t.Fatalf("%s is not pcapng", file)
	}
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Log("tshark not found (apt-get install tshark): pcapng sample checked only for its magic")
		return true
	}
	out, err := exec.Command(tshark, "-r", file, "-T", "fields", "-e", "usb.setup.bRequest", "-e", "usb.capdata").CombinedOutput()
	if err != nil {
		t.Fatalf("tshark -r %s: %v\n%s", file, err, out)
	}
	s := string(out)
	if !regexp.MustCompile(`(?m)^6\t`).MatchString(s) {
		t.Errorf("tshark finds no GET_DESCRIPTOR request in the pcapng capture")
		ok = false
	}
	for _, d := range []string{"d0", "d1"} {
		hex := fmt.Sprintf("%x", DiskSector(d, 0)[:16])
		if !strings.Contains(strings.ReplaceAll(s, ":", ""), hex) {
			t.Errorf("tshark finds no data of disk %s in the pcapng capture (%d bytes, %d packets)", d, len(b), strings.Count(s, "\n"))
			ok = false
		}
	}
	return ok
}
