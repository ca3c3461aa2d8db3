package userevents

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/internal/vmlab"
)

// TestVM boots the lab kernel (Linux 6.12 with CONFIG_USER_EVENTS) and runs
// this package's TestLab* tests inside it. Golden files the guest leaves
// (format files, a ring-buffer page, status files, perf numbers) are
// copied to $IOTAP_UE_GOLDEN when that is set.
func TestVM(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: boots QEMU")
	}
	if vmlab.InVM() {
		t.Skip("already in the guest")
	}
	bin := filepath.Join(t.TempDir(), "userevents.test")
	cmd := exec.Command("go", "test", "-c", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	bins := map[string]string{"/bin/userevents.test": bin}
	if _, err := exec.LookPath("gcc"); err == nil {
		bins["/bin/ue_writev"] = vmlab.BuildC(t, "../bench/userevents/writev.c")
	}
	run := os.Getenv("IOTAP_UE_RUN")
	if run == "" {
		run = "^TestLab"
	}
	cpus := 2 // per-CPU buffers get exercised
	if n, err := strconv.Atoi(os.Getenv("IOTAP_UE_CPUS")); err == nil && n > 0 {
		cpus = n
	}
	res := vmlab.Run(t, vmlab.Machine{
		CPUs:     cpus,
		Binaries: bins,
		Timeout:  9 * time.Minute,
		Script: `/bin/userevents.test -test.run '` + run + `' -test.v -test.timeout 8m > /out/test.log 2>&1 || echo FAIL >> /out/test.log
echo done`,
	})
	log := string(res.ReadOut(t, "test.log"))
	t.Logf("guest test output:\n%s", log)
	if dst := os.Getenv("IOTAP_UE_GOLDEN"); dst != "" {
		ents, _ := os.ReadDir(res.Out)
		for _, e := range ents {
			if b, err := os.ReadFile(filepath.Join(res.Out, e.Name())); err == nil {
				os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644)
			}
		}
	}
	if strings.Contains(log, "FAIL") || !strings.Contains(log, "PASS") {
		t.Fatal("lab tests failed in the guest")
	}
}
