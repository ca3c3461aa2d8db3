package mmiotrace

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeSysfs builds a sysfs tree with the e1000 at 0000:00:03.0, bound to
// e1000 when bound is set.
func fakeSysfs(t *testing.T, bound bool) (Sysfs, string) {
	t.Helper()
	root := t.TempDir()
	dev := filepath.Join(root, "bus", "pci", "devices", "0000:00:03.0")
	drv := filepath.Join(root, "bus", "pci", "drivers", "e1000")
	for _, d := range []string{dev, drv} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(drv, "bind"), filepath.Join(drv, "unbind"), filepath.Join(root, "bus", "pci", "drivers_probe")} {
		os.WriteFile(f, nil, 0o644)
	}
	if bound {
		if err := os.Symlink("../../../bus/pci/drivers/e1000", filepath.Join(dev, "driver")); err != nil {
			t.Fatal(err)
		}
	}
	return Sysfs{Root: root}, root
}

func TestSysfsBindUnbind(t *testing.T) {
	s, root := fakeSysfs(t, true)
	a, _ := ParsePCIAddr("0000:00:03.0")
	if d, err := s.Driver(a); err != nil || d != "e1000" {
		t.Fatalf("driver %q %v", d, err)
	}
	d, err := s.Unbind(a)
	if err != nil || d != "e1000" {
		t.Fatalf("unbind: %q %v", d, err)
	}
	got, _ := os.ReadFile(filepath.Join(root, "bus", "pci", "drivers", "e1000", "unbind"))
	if string(got) != "0000:00:03.0" {
		t.Errorf("unbind wrote %q", got)
	}
	if err := s.Bind(a, "e1000"); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(filepath.Join(root, "bus", "pci", "drivers", "e1000", "bind"))
	if string(got) != "0000:00:03.0" {
		t.Errorf("bind wrote %q", got)
	}
	if err := s.Bind(a, ""); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(filepath.Join(root, "bus", "pci", "drivers_probe"))
	if string(got) != "0000:00:03.0" {
		t.Errorf("drivers_probe got %q", got)
	}
	for _, bad := range []string{"../x", "a/b", ".."} {
		if err := s.Bind(a, bad); err == nil {
			t.Errorf("driver name %q accepted", bad)
		}
	}
	// Missing driver control files are never created.
	if err := s.Bind(a, "nouveau"); err == nil {
		t.Error("bind to a missing driver succeeded")
	}
	if _, err := os.Stat(filepath.Join(root, "bus", "pci", "drivers", "nouveau")); err == nil {
		t.Error("bind created a driver directory")
	}
	// An unbound device unbinds to nothing; a missing device is an error.
	u, _ := fakeSysfs(t, false)
	if d, err := u.Unbind(a); err != nil || d != "" {
		t.Errorf("unbind of an unbound device: %q %v", d, err)
	}
	b, _ := ParsePCIAddr("0000:00:09.0")
	if _, err := u.Driver(b); err == nil {
		t.Error("missing device has a driver")
	}
}
