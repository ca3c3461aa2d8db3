package vmlab

import (
	"os"
	"sync/atomic"
	"time"
)

// kvmProbeTime is how long a KVM guest of IOTAP_VM_ACCEL=auto may take to
// start its script before Run gives up on KVM (a KVM boot takes about a
// second; the broken nested KVM seen here hangs without a word).
const kvmProbeTime = 20 * time.Second

// kvmBroken records that a KVM boot failed in this process, so that later
// runs go straight to TCG.
var kvmBroken atomic.Bool

// chooseAccel picks the QEMU accelerator from IOTAP_VM_ACCEL: "tcg" (the
// default), "kvm" (KVM only, no fallback) or "auto" (KVM when /dev/kvm
// opens read-write, falling back to TCG if the KVM boot fails). fallback
// says whether Run may retry under TCG.
//
// TCG is the default because on the machines this project grew up on
// /dev/kvm opens but the nested KVM stops the guest with "KVM internal
// error ... emulation failure" or hangs silently; see docs/lab.md.
func chooseAccel() (accel string, fallback bool) {
	switch os.Getenv("IOTAP_VM_ACCEL") {
	case "kvm":
		return "kvm", false
	case "auto":
		if kvmBroken.Load() {
			return "tcg", false
		}
		f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
		if err != nil {
			return "tcg", false
		}
		f.Close()
		return "kvm", true
	default:
		return "tcg", false
	}
}
