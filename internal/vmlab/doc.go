// Package vmlab is iotap's QEMU lab: tests boot the lab kernel
// (../shared/vm/bzImage, or IOTAP_VM_KERNEL) with a busybox initramfs
// built in Go, run a shell script or a package's test binary in the guest
// and get back what the guest wrote to /out.
//
//	res := vmlab.Run(t, vmlab.Machine{USB: true, Script: `
//		cat /sys/kernel/debug/usb/usbmon/0u >/out/0u & sleep 2; kill $!
//	`})
//	if res.ExitCode != 0 { t.Fatal(res.Console) }
//	b := res.ReadOut(t, "0u")
//
// Capture code tests itself in the guest with GoTest:
//
//	func TestLabCapture(t *testing.T) {
//		if !vmlab.InVM() {
//			vmlab.GoTest(t, vmlab.Machine{USB: true}, ".", "^TestLabCapture$")
//			return
//		}
//		// runs in the guest, as root, on the lab kernel
//	}
//
// Lab runs skip under "go test -short" and when qemu-system-x86_64, the
// kernel or a static busybox is missing, naming the remedy. They fail
// when the guest breaks (panic, timeout, init failure).
//
// # The guest
//
// The initramfs holds /bin/busybox (Debian's busybox-static, or
// IOTAP_VM_BUSYBOX) with its applets, a static /bin/iotap built from
// ./cmd/iotap once per test process, Machine.Binaries and Machine.Files.
// /init mounts proc, sysfs, devtmpfs, debugfs at /sys/kernel/debug,
// tracefs at /sys/kernel/tracing, a tmpfs at /tmp and the host's 9p share
// at /out, sets IOTAP_IN_VM=1, waits for the USB devices (Machine.USB),
// runs Machine.Script with "sh -e" in /tmp, writes its exit status to
// /out/.exit and powers off. The kernel runs with oops=panic and panic=-1,
// so an oops ends the run and fails the test.
//
// Helpers in the guest's PATH:
//
//	lab_monitor "HMP command"    run a QEMU monitor command on the host
//	                             (device_del kbd0, device_add usb-kbd,id=kbd0,bus=xhci.0,
//	                             info usb); prints its output, exits 1 on a monitor error
//	lab_wait SECONDS CMD [ARG]   retry CMD every 0.1 s until it succeeds
//	lab_usb_ready                succeed once the lab's USB devices have enumerated
//
// lab_monitor writes a request file into /out/.vmlab; the host polls that
// directory every 50 ms, runs the command through QMP and answers with a
// file the guest polls for.
//
// # Hardware
//
// PCI slots are pinned: e1000 at 0000:00:03.0 (E1000PCI; vendor 0x8086,
// device 0x100e, driver e1000, interface eth0, MAC 52:54:00:12:34:56),
// qemu-xhci at 0000:00:04.0 (XHCIPCI), usb-ehci at 0000:00:05.0 (EHCIPCI),
// virtio-9p at 0000:00:06.0. With Machine.USB the xHCI controller (QEMU
// id xhci) has a USB 2 root hub carrying usb-kbd kbd0 and usb-tablet
// tablet0 (high speed) and a USB 3 root hub carrying usb-storage stor0
// (SuperSpeed, disk d0); the EHCI controller (id ehci) carries usb-storage
// stor1 (high speed, disk d1). Seen so far: usbmon bus 1 is xHCI USB 2,
// bus 2 EHCI, bus 3 xHCI USB 3, sda the EHCI disk and sdb the xHCI disk;
// the controllers probe concurrently, so tests look the numbers up
// (/sys/bus/pci/devices/XHCIPCI/usb*/busnum, readlink of /sys/block/sd*)
// rather than hard-coding them. Each disk is a 16 MiB raw image (DiskSize) whose sector n
// holds DiskSector(disk, n), so guest tests can read it with dd and check
// what they captured. The e1000's network is a QEMU UDP socket between
// two free ports on 127.0.0.1: nothing reaches a host network.
//
// # Accelerator
//
// IOTAP_VM_ACCEL chooses: "tcg" (default), "kvm", or "auto" (KVM when
// /dev/kvm opens, falling back to TCG when the KVM guest has not started
// its script within 20 s). TCG is the default because nested KVM on the
// project's machines opens but never boots the guest. Under TCG the guest
// reaches its script in 4 to 20 s depending on host load. For robustness
// under load the kernel boots with no_timer_check, a guest with several
// vCPUs runs them in one TCG thread (-accel tcg,thread=single), and a
// guest that fails before its script starts (ErrBootFailed) is booted
// again, up to MaxBootRetries times, with a logged "vmlab: RETRY" line.
// Failures after the script started are never retried.
//
// IOTAP_VM_VERBOSE=1 copies the guest console to stderr as it runs.
package vmlab
