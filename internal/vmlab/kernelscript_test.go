package vmlab

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestKernelScriptSyntax(t *testing.T) {
	script := filepath.Join(moduleRoot(t), "scripts", "lab-kernel.sh")
	if out, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n %s: %v\n%s", script, err, out)
	}
	out, err := exec.Command("bash", script).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !bytes.Contains(out, []byte("usage:")) {
		t.Errorf("lab-kernel.sh without arguments: %v, %s; want exit 2 and its usage", err, out)
	}
}

// With IOTAP_CHECK_LAB_KERNEL=1, scripts/lab-kernel.sh --config-only must
// reproduce the configuration of the shared lab kernel (about a minute
// and a half; needs linux-source-6.12, bison, flex, libelf-dev,
// libssl-dev, bc).
func TestKernelConfigReproduces(t *testing.T) {
	if os.Getenv("IOTAP_CHECK_LAB_KERNEL") != "1" {
		t.Skip("set IOTAP_CHECK_LAB_KERNEL=1 to configure the lab kernel from linux-source-6.12 and compare")
	}
	root := moduleRoot(t)
	want, err := os.ReadFile(filepath.Join(root, "..", "shared", "vm", "kernel.config"))
	if err != nil {
		t.Skipf("no shared kernel.config to compare with: %v", err)
	}
	out := filepath.Join(t.TempDir(), "config")
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "lab-kernel.sh"), "--config-only", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("lab-kernel.sh --config-only: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	g, w := configLines(got), configLines(want)
	for k, v := range w {
		if g[k] != v {
			t.Errorf("%s: shared kernel.config has %q, the script makes %q", k, v, g[k])
		}
	}
	for k, v := range g {
		if _, ok := w[k]; !ok {
			t.Errorf("%s=%s is set by the script but not in the shared kernel.config", k, v)
		}
	}
}

// configLines maps each CONFIG_ option of a .config to its value ("n"
// for "is not set").
func configLines(b []byte) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "CONFIG_"):
			k, v, _ := strings.Cut(l, "=")
			m[k] = v
		case strings.HasPrefix(l, "# CONFIG_") && strings.HasSuffix(l, " is not set"):
			m[strings.TrimSuffix(strings.TrimPrefix(l, "# "), " is not set")] = "n"
		}
	}
	return m
}
