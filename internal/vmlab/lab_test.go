package vmlab

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLabBoot(t *testing.T) {
	res := Run(t, Machine{KernelArgs: "vmlab.test=yes", Script: `
grep -q vmlab.test=yes /proc/cmdline
echo hello >/out/hello
uname -r >/out/uname
cat /proc/mounts >/out/mounts
ls /sys/bus/pci/devices >/out/pci
exit 3
`})
	if res.ExitCode != 3 {
		t.Errorf("exit code = %d, want 3", res.ExitCode)
	}
	if got := string(res.ReadOut(t, "hello")); got != "hello\n" {
		t.Errorf("/out/hello = %q", got)
	}
	mounts := string(res.ReadOut(t, "mounts"))
	for _, want := range []string{" /sys/kernel/debug debugfs ", " /sys/kernel/tracing tracefs ", " /out 9p ", " /proc proc ", " /dev devtmpfs "} {
		if !strings.Contains(mounts, want) {
			t.Errorf("guest mounts lack %q:\n%s", want, mounts)
		}
	}
	t.Logf("uname: %s", res.ReadOut(t, "uname"))
}

// usbScript waits for the lab's USB devices and reads sector 1234 of each
// disk, named after the controller it hangs off.
const usbScript = `
for p in /sys/bus/usb/devices/*/product; do cat "$p"; done >/out/products
for b in /sys/block/sd*; do
	case "$(readlink -f $b)" in
	*/0000:00:04.0/*) c=xhci ;;
	*/0000:00:05.0/*) c=ehci ;;
	*) c=unknown ;;
	esac
	dd if=/dev/${b##*/} of=/out/$c.sector bs=512 skip=1234 count=1 2>/dev/null
	dd if=/dev/${b##*/} of=/dev/null bs=64k 2>/dev/null
done
`

func TestLabUSB(t *testing.T) {
	res := Run(t, Machine{USB: true, Script: usbScript})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (exit %d):\n%s", res.ExitCode, tail(res.Console, 30))
	}
	products := string(res.ReadOut(t, "products"))
	for _, want := range []string{"QEMU USB Keyboard", "QEMU USB Tablet", "QEMU USB HARDDRIVE", "xHCI Host Controller", "EHCI Host Controller"} {
		if !strings.Contains(products, want) {
			t.Errorf("guest USB devices lack %q:\n%s", want, products)
		}
	}
	for ctrl, disk := range map[string]string{"xhci": "d0", "ehci": "d1"} {
		got := res.ReadOut(t, ctrl+".sector")
		if want := DiskSector(disk, 1234); !bytes.Equal(got, want) {
			t.Errorf("sector 1234 of the disk behind %s = %q, want %q", ctrl, got, want)
		}
	}
}

func TestLabNIC(t *testing.T) {
	res := Run(t, Machine{NIC: true, Script: `
readlink /sys/bus/pci/devices/` + E1000PCI + `/driver >/out/driver
ls /sys/bus/pci/devices/` + E1000PCI + `/net >/out/ifname
cat /sys/bus/pci/devices/` + E1000PCI + `/vendor /sys/bus/pci/devices/` + E1000PCI + `/device >/out/ids
ip link set eth0 up
`})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (exit %d):\n%s", res.ExitCode, tail(res.Console, 30))
	}
	if d := strings.TrimSpace(string(res.ReadOut(t, "driver"))); !strings.HasSuffix(d, "/e1000") {
		t.Errorf("driver of %s = %q, want e1000", E1000PCI, d)
	}
	if ids := strings.Fields(string(res.ReadOut(t, "ids"))); len(ids) != 2 || ids[0] != "0x8086" || ids[1] != "0x100e" {
		t.Errorf("vendor/device of %s = %q, want 0x8086 0x100e", E1000PCI, ids)
	}
	if ifn := strings.TrimSpace(string(res.ReadOut(t, "ifname"))); ifn != "eth0" {
		t.Errorf("e1000 interface = %q, want eth0", ifn)
	}
}

func TestLabMonitorHotplug(t *testing.T) {
	res := Run(t, Machine{USB: true, Script: `
lab_monitor "device_del kbd0"
lab_wait 30 sh -c '! grep -qx "QEMU USB Keyboard" /sys/bus/usb/devices/*/product'
echo gone >/out/gone
lab_monitor "device_add usb-kbd,id=kbd0,bus=xhci.0"
lab_wait 30 sh -c 'grep -qx "QEMU USB Keyboard" /sys/bus/usb/devices/*/product'
echo back >/out/back
lab_monitor "info usb" >/out/info-usb
if lab_monitor "device_del nosuchdevice" >/out/bad 2>&1; then echo 0 >/out/bad-status; else echo $? >/out/bad-status; fi
`})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (exit %d):\n%s", res.ExitCode, tail(res.Console, 30))
	}
	res.ReadOut(t, "gone")
	res.ReadOut(t, "back")
	if info := string(res.ReadOut(t, "info-usb")); !strings.Contains(info, "QEMU USB Keyboard") {
		t.Errorf("lab_monitor \"info usb\" printed %q", info)
	}
	if st := strings.TrimSpace(string(res.ReadOut(t, "bad-status"))); st != "1" {
		t.Errorf("lab_monitor of a failing command exited %s, want 1 (output %q)", st, res.ReadOut(t, "bad"))
	}
}

func TestLabGoTest(t *testing.T) {
	if !InVM() {
		GoTest(t, Machine{Files: map[string][]byte{"/etc/lab-file": []byte("from the host\n")}}, ".", "^TestLabGoTest$")
		return
	}
	if b, err := os.ReadFile("/etc/lab-file"); err != nil || string(b) != "from the host\n" {
		t.Errorf("/etc/lab-file = %q, %v", b, err)
	}
	if b, err := os.ReadFile("testdata/helloc.c"); err != nil || !bytes.Contains(b, []byte("int main")) {
		t.Errorf("the package's testdata is not in the guest's working directory: %v", err)
	}
	for _, p := range []string{"/bin/iotap", "/sys/kernel/tracing/trace_marker", "/sys/kernel/debug/usb/usbmon", "/out"} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("guest lacks %s: %v", p, err)
		}
	}
	if err := os.WriteFile("/out/from-gotest", []byte("ok"), 0o644); err != nil {
		t.Error(err)
	}
}

func TestLabGuestFailure(t *testing.T) {
	res := Run(t, Machine{Script: "echo before; false; echo after >/out/after"})
	if res.ExitCode != 1 {
		t.Errorf("exit code of a script whose command failed = %d, want 1 (sh -e)", res.ExitCode)
	}
	if _, err := os.Stat(filepath.Join(res.Out, "after")); err == nil {
		t.Error("script went on after a failing command")
	}
	if !strings.Contains(res.Console, "before") {
		t.Errorf("console lacks the script's output:\n%s", tail(res.Console, 20))
	}
}

func TestLabBinaries(t *testing.T) {
	res := Run(t, Machine{
		Binaries: map[string]string{
			"/bin/helloc":      BuildC(t, "testdata/helloc.c"),
			"/usr/bin/hellogo": BuildGo(t, "./internal/vmlab/testdata/hellogo"),
		},
		Script: "helloc /out/c one two; hellogo /out/go three; iotap version >/out/iotap-version",
	})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (exit %d):\n%s", res.ExitCode, tail(res.Console, 30))
	}
	if got := string(res.ReadOut(t, "c")); !strings.HasPrefix(got, "c one two\n6.12.") {
		t.Errorf("static C binary wrote %q", got)
	}
	if got := string(res.ReadOut(t, "go")); got != "go three\n" {
		t.Errorf("static Go binary wrote %q", got)
	}
	if got := string(res.ReadOut(t, "iotap-version")); !strings.Contains(got, "6.12") {
		t.Errorf("iotap version in the guest printed %q (want the guest kernel's release in it)", got)
	}
}
