//go:build linux

package mmiotrace

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	iunix "github.com/iotap/iotap/internal/unix"
)

// BARTarget replays onto a PCI device's memory BARs mapped through sysfs
// (/sys/bus/pci/devices/<addr>/resourceN). Close it to unmap.
type BARTarget struct {
	sys  Sysfs
	addr PCIAddr
	maps map[int][]byte
}

// OpenBARTarget prepares replay onto the device at addr. It refuses a
// device bound to a driver unless force is set: writes would fight the
// driver.
func OpenBARTarget(sys Sysfs, addr PCIAddr, force bool) (*BARTarget, error) {
	if sys.Root == "" {
		sys = DefaultSysfs
	}
	drv, err := sys.Driver(addr)
	if err != nil {
		return nil, err
	}
	if drv != "" && !force {
		return nil, fmt.Errorf("mmiotrace: %s is bound to %s: unbind it first (echo %s > /sys/bus/pci/drivers/%s/unbind) or use --force", addr, drv, addr, drv)
	}
	return &BARTarget{sys: sys, addr: addr, maps: map[int][]byte{}}, nil
}

func (t *BARTarget) bar(i int) ([]byte, error) {
	if m, ok := t.maps[i]; ok {
		return m, nil
	}
	if i < 0 || i > 5 {
		return nil, fmt.Errorf("BAR %d cannot be mapped", i)
	}
	p := filepath.Join(t.sys.DeviceDir(t.addr), "resource"+strconv.Itoa(i))
	fd, err := iunix.Open(p, iunix.O_RDWR|os.O_SYNC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", p, err)
	}
	defer fd.Close()
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if fi.Size() <= 0 || fi.Size() > 1<<32 {
		return nil, fmt.Errorf("%s: odd size %d", p, fi.Size())
	}
	m, err := iunix.Mmap(fd.Int(), 0, int(fi.Size()), iunix.PROT_READ|iunix.PROT_WRITE, iunix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", p, err)
	}
	t.maps[i] = m
	return m, nil
}

// Write stores v with one access of width bytes at off of BAR bar.
func (t *BARTarget) Write(bar int, off uint64, width int, v uint64) error {
	m, err := t.bar(bar)
	if err != nil {
		return err
	}
	return iunix.MMIOWrite(m, off, width, v)
}

// Read loads width bytes at off of BAR bar.
func (t *BARTarget) Read(bar int, off uint64, width int) (uint64, error) {
	m, err := t.bar(bar)
	if err != nil {
		return 0, err
	}
	return iunix.MMIORead(m, off, width)
}

// Close unmaps the BARs.
func (t *BARTarget) Close() error {
	var first error
	for i, m := range t.maps {
		if err := iunix.Munmap(m); err != nil && first == nil {
			first = err
		}
		delete(t.maps, i)
	}
	return first
}
