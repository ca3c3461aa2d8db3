package mmiotrace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Sysfs reaches PCI devices through sysfs. Root is the sysfs mount
// ("/sys"); tests point it at a fake tree. Every path is built from a
// validated PCIAddr or driver name, never from raw input.
type Sysfs struct{ Root string }

// DefaultSysfs is the real sysfs.
var DefaultSysfs = Sysfs{Root: "/sys"}

// DeviceDir returns /sys/bus/pci/devices/<addr>.
func (s Sysfs) DeviceDir(a PCIAddr) string {
	return filepath.Join(s.Root, "bus", "pci", "devices", a.String())
}

// CheckDevice fails when the device does not exist.
func (s Sysfs) CheckDevice(a PCIAddr) error {
	if _, err := os.Stat(s.DeviceDir(a)); err != nil {
		return fmt.Errorf("mmiotrace: PCI device %s: %w", a, err)
	}
	return nil
}

// Driver returns the name of the driver bound to the device, "" when none.
func (s Sysfs) Driver(a PCIAddr) (string, error) {
	l, err := os.Readlink(filepath.Join(s.DeviceDir(a), "driver"))
	if errors.Is(err, os.ErrNotExist) {
		return "", s.CheckDevice(a)
	}
	if err != nil {
		return "", fmt.Errorf("mmiotrace: driver of %s: %w", a, err)
	}
	return filepath.Base(l), nil
}

// ValidDriverName reports whether name can be a PCI driver directory.
func ValidDriverName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-.", c)) {
			return false
		}
	}
	return true
}

// Unbind detaches the device from its driver (no-op when unbound) and
// returns the driver's name.
func (s Sysfs) Unbind(a PCIAddr) (string, error) {
	drv, err := s.Driver(a)
	if err != nil || drv == "" {
		return "", err
	}
	if !ValidDriverName(drv) {
		return "", fmt.Errorf("mmiotrace: unbind %s: odd driver name %q", a, drv)
	}
	p := filepath.Join(s.Root, "bus", "pci", "drivers", drv, "unbind")
	if err := writeExisting(p, a.String()); err != nil {
		return drv, fmt.Errorf("mmiotrace: unbind %s from %s: %w", a, drv, err)
	}
	return drv, nil
}

// Bind binds the device to the named driver through
// /sys/bus/pci/drivers/<drv>/bind, or lets the kernel pick one through
// /sys/bus/pci/drivers_probe when drv is empty.
func (s Sysfs) Bind(a PCIAddr, drv string) error {
	p := filepath.Join(s.Root, "bus", "pci", "drivers_probe")
	if drv != "" {
		if !ValidDriverName(drv) {
			return fmt.Errorf("mmiotrace: bind %s: bad driver name %q", a, drv)
		}
		p = filepath.Join(s.Root, "bus", "pci", "drivers", drv, "bind")
	}
	if err := writeExisting(p, a.String()); err != nil {
		return fmt.Errorf("mmiotrace: bind %s to %s: %w", a, cmpOr(drv, "a driver (drivers_probe)"), err)
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// writeExisting writes to an existing control file (never creating one).
func writeExisting(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
