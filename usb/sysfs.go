package usb

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultSysfsRoot is where the kernel lists USB devices.
const DefaultSysfsRoot = "/sys/bus/usb/devices"

// LoadSysfs reads the devices present now from root (DefaultSysfsRoot, or
// a copy of it in tests): busnum, devnum, idVendor, idProduct,
// bDeviceClass and the manufacturer/product/serial strings of every device
// directory, and bInterfaceClass of its interfaces ("1-1:1.0"). Entries
// that are not devices are skipped; unreadable optional files leave their
// field empty.
func LoadSysfs(root string) ([]DeviceInfo, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("usb: list usb devices: %w", err)
	}
	byName := map[string]*DeviceInfo{}
	var names []string
	for _, e := range ents {
		name := e.Name()
		if strings.Contains(name, ":") {
			continue
		}
		dir := filepath.Join(root, name)
		bus, err1 := readUint(dir, "busnum", 10, 16)
		dev, err2 := readUint(dir, "devnum", 10, 8)
		if err1 != nil || err2 != nil {
			continue
		}
		d := &DeviceInfo{Bus: uint16(bus), Device: uint8(dev), Source: "sysfs"}
		v, err1 := readUint(dir, "idVendor", 16, 16)
		p, err2 := readUint(dir, "idProduct", 16, 16)
		if err1 == nil && err2 == nil {
			d.HasID, d.Vendor, d.Product = true, uint16(v), uint16(p)
		}
		if c, err := readUint(dir, "bDeviceClass", 16, 8); err == nil {
			d.Class = uint8(c)
		}
		d.Manufacturer = readString(dir, "manufacturer")
		d.ProductName = readString(dir, "product")
		d.Serial = readString(dir, "serial")
		byName[name] = d
		names = append(names, name)
	}
	for _, e := range ents {
		name := e.Name()
		parent, _, ok := strings.Cut(name, ":")
		d := byName[parent]
		if !ok || d == nil {
			continue
		}
		dir := filepath.Join(root, name)
		n, err1 := readUint(dir, "bInterfaceNumber", 16, 8)
		c, err2 := readUint(dir, "bInterfaceClass", 16, 8)
		if err1 != nil || err2 != nil {
			continue
		}
		if d.Interfaces == nil {
			d.Interfaces = map[uint8]uint8{}
		}
		d.Interfaces[uint8(n)] = uint8(c)
	}
	out := make([]DeviceInfo, 0, len(names))
	for _, n := range names {
		out = append(out, *byName[n])
	}
	return out, nil
}

// AddSysfs loads root with LoadSysfs and records every device found, so
// that VID:PID filters work for devices that enumerated before a live
// capture started.
func (ids *Identities) AddSysfs(root string) error {
	devs, err := LoadSysfs(root)
	for _, d := range devs {
		ids.Set(d)
	}
	return err
}

// maxSysfsFile caps what is read from one attribute file.
const maxSysfsFile = 4096

func readString(dir, name string) string {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, maxSysfsFile)
	n, _ := f.Read(b)
	return strings.TrimRight(string(b[:n]), "\n")
}

func readUint(dir, name string, base, bits int) (uint64, error) {
	s := readString(dir, name)
	if s == "" {
		return 0, fs.ErrNotExist
	}
	v, err := strconv.ParseUint(strings.TrimSpace(s), base, bits)
	if err != nil {
		return 0, errors.New("usb: " + filepath.Join(dir, name) + ": " + err.Error())
	}
	return v, nil
}
