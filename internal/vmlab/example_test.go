package vmlab_test

import (
	"fmt"
	"testing"

	"github.com/iotap/iotap/internal/vmlab"
)

// What a guest test reading sector 7 of the xHCI disk with
// "dd if=/dev/sdX bs=512 skip=7 count=1" gets.
func ExampleDiskSector() {
	fmt.Printf("%q\n", vmlab.DiskSector("d0", 7)[:50])
	// Output: "vmlab d0 sector 00000007\nvmlab d0 sector 00000007\n"
}

// A lab test runs a script in the guest and inspects /out.
func ExampleRun() {
	var t testing.TB // the test's *testing.T
	res := vmlab.Run(t, vmlab.Machine{USB: true, Script: `
		cat /sys/kernel/debug/usb/usbmon/0u >/out/0u &
		dd if=/dev/sda of=/dev/null bs=64k count=16
		sleep 1; kill $!
	`})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed:\n%s", res.Console)
	}
	_ = res.ReadOut(t, "0u")
}

// A capture test runs itself in the guest.
func ExampleGoTest() {
	var t testing.TB // the test's *testing.T, in TestLabCapture
	if !vmlab.InVM() {
		vmlab.GoTest(t, vmlab.Machine{USB: true}, ".", "^TestLabCapture$")
		return
	}
	// From here on the test runs in the guest, as root, on the lab kernel.
}
