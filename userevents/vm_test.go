package userevents

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/iotap/iotap/internal/vmlab"
)

// TestVM boots the lab kernel (Linux 6.12 with CONFIG_USER_EVENTS) and runs
// this package's TestLab* tests inside it (IOTAP_UE_RUN overrides the
// pattern, IOTAP_UE_CPUS the vCPU count). Files the guest leaves in /out
// (format files, ring-buffer pages, status and trace text, perf numbers)
// are copied to $IOTAP_UE_GOLDEN when that is set.
func TestVM(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: boots QEMU")
	}
	if vmlab.InVM() {
		t.Skip("already in the guest")
	}
	bins := map[string]string{}
	if _, err := exec.LookPath("gcc"); err == nil {
		bins["/bin/ue_writev"] = vmlab.BuildC(t, "../bench/userevents/writev.c")
	}
	run := os.Getenv("IOTAP_UE_RUN")
	if run == "" {
		run = "^TestLab"
	}
	// One vCPU: with two, multi-threaded TCG sometimes catches the int3 of
	// a static-key patch (enabling a tracepoint) on the other vCPU and the
	// guest kernel oopses in __schedule. The golden pages of two CPUs in
	// testdata were captured with IOTAP_UE_CPUS=2.
	cpus := 1
	if n, err := strconv.Atoi(os.Getenv("IOTAP_UE_CPUS")); err == nil && n > 0 {
		cpus = n
	}
	res := vmlab.GoTest(t, vmlab.Machine{CPUs: cpus, Binaries: bins, Timeout: 9 * time.Minute}, ".", run)
	if dst := os.Getenv("IOTAP_UE_GOLDEN"); dst != "" {
		ents, _ := os.ReadDir(res.Out)
		for _, e := range ents {
			if b, err := os.ReadFile(filepath.Join(res.Out, e.Name())); err == nil {
				os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644)
			}
		}
	}
}
