package usb

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/iotap/iotap/usbmon"
)

// DescriptorEvents reads the descriptors of every USB device under root
// (DefaultSysfsRoot, or a copy in tests) and returns them as the control
// transfers that would have fetched them, each a submission and its
// completion marked Synthesized, stamped t: GET_DESCRIPTOR(DEVICE) with
// the 18-byte device descriptor, GET_DESCRIPTOR(CONFIGURATION) for each
// configuration in sysfs "descriptors" (wTotalLength bytes each), and
// GET_DESCRIPTOR(HID report) for each HID interface with a
// report_descriptor. keep selects devices (nil: all). A device whose
// files cannot be read or parsed is skipped with an error in errs; the
// others are still returned. URB ids count down from 0xffffffff00000000
// (no kernel pointer looks like that).
func DescriptorEvents(root string, t time.Time, keep func(bus uint16, dev uint8) bool) (evs []usbmon.Event, errs []error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, []error{fmt.Errorf("usb: descriptors: %w", err)}
	}
	var names []string
	for _, e := range ents {
		if !strings.Contains(e.Name(), ":") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	id := uint64(0xffffffff00000000)
	add := func(bus uint16, dev uint8, setup [8]byte, data []byte) {
		base := usbmon.Event{ID: id, Transfer: usbmon.Control, In: true, Bus: bus, Device: dev,
			Sec: t.Unix(), Usec: int32(t.Nanosecond() / 1000), Fields: usbmon.HasWallClock | usbmon.HasBus, Synthesized: true}
		id--
		s := base
		s.Type, s.Status, s.SetupFlag, s.Setup = usbmon.Submission, -115, usbmon.SetupPresent, setup
		s.Length, s.DataFlag = uint32(binary.LittleEndian.Uint16(setup[6:])), '<'
		c := base
		c.Type, c.SetupFlag, c.Length, c.DataFlag, c.Data = usbmon.Callback, usbmon.SetupNone, uint32(len(data)), usbmon.DataPresent, data
		evs = append(evs, s, c)
	}
	for _, name := range names {
		dir := filepath.Join(root, name)
		bus, err1 := readUint(dir, "busnum", 10, 16)
		dev, err2 := readUint(dir, "devnum", 10, 8)
		if err1 != nil || err2 != nil {
			continue // not a device
		}
		if keep != nil && !keep(uint16(bus), uint8(dev)) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, "descriptors"))
		if err != nil {
			errs = append(errs, fmt.Errorf("usb: descriptors of %s (bus %d device %d) not injected: %w", name, bus, dev, err))
			continue
		}
		if len(raw) < 18 || raw[0] != 18 || raw[1] != 1 {
			errs = append(errs, fmt.Errorf("usb: %s: %d bytes, not a device descriptor first: not injected", filepath.Join(dir, "descriptors"), len(raw)))
			continue
		}
		add(uint16(bus), uint8(dev), [8]byte{0x80, 6, 0, 1, 0, 0, 18, 0}, raw[:18])
		rest := raw[18:]
		for cfg := 0; len(rest) > 0; cfg++ {
			if len(rest) < 9 || rest[1] != 2 {
				errs = append(errs, fmt.Errorf("usb: %s: configuration %d at byte %d is not a configuration descriptor: the rest not injected", filepath.Join(dir, "descriptors"), cfg, len(raw)-len(rest)))
				break
			}
			total := int(binary.LittleEndian.Uint16(rest[2:]))
			if total < 9 || total > len(rest) {
				errs = append(errs, fmt.Errorf("usb: %s: configuration %d: wTotalLength %d, %d bytes left: the rest not injected", filepath.Join(dir, "descriptors"), cfg, total, len(rest)))
				break
			}
			add(uint16(bus), uint8(dev), [8]byte{0x80, 6, byte(cfg), 2, 0, 0, byte(total), byte(total >> 8)}, rest[:total])
			rest = rest[total:]
		}
		// HID report descriptors: DIR/NAME:C.I/BUS:VID:PID.N/report_descriptor.
		intfs, _ := filepath.Glob(filepath.Join(root, name+":*"))
		sort.Strings(intfs)
		for _, in := range intfs {
			num, err := readUint(in, "bInterfaceNumber", 16, 8)
			if err != nil {
				continue
			}
			reps, _ := filepath.Glob(filepath.Join(in, "*:*:*.*", "report_descriptor"))
			if len(reps) == 0 {
				continue
			}
			rd, err := os.ReadFile(reps[0])
			if err != nil {
				errs = append(errs, fmt.Errorf("usb: HID report descriptor of %s not injected: %w", filepath.Base(in), err))
				continue
			}
			add(uint16(bus), uint8(dev), [8]byte{0x81, 6, 0, 0x22, byte(num), 0, byte(len(rd)), byte(len(rd) >> 8)}, rd)
		}
	}
	return evs, errs
}

// DescriptorPrelude is a usbmon.FileOptions.Prelude: the descriptors of
// the devices present on bus (0: every bus) in sysfs (root), as the
// GET_DESCRIPTOR transfers a capture started after their enumeration
// missed, stamped when it is called and marked synthesized (packet
// comment; iotap's analyses skip them). warn, if set, gets each device
// that could not be read; the others are still given.
func DescriptorPrelude(root string, bus int, warn func(error)) func() []usbmon.Event {
	return func() []usbmon.Event {
		evs, errs := DescriptorEvents(root, time.Now(), func(b uint16, _ uint8) bool { return bus == 0 || int(b) == bus })
		for _, err := range errs {
			if warn != nil {
				warn(err)
			}
		}
		return evs
	}
}
