package usb

import (
	"strconv"
	"strings"
)

// hasIDs reports whether the descriptor declares report IDs (then every
// report starts with its ID byte).
func (rd ReportDescriptor) hasIDs() bool {
	for _, r := range rd.Reports {
		if r.ID != 0 {
			return true
		}
	}
	return false
}

// bitsAt extracts size (1..32) bits at bit offset off of b, little-endian
// as HID lays them out.
func bitsAt(b []byte, off, size int) (uint32, bool) {
	if size < 1 || size > 32 || off < 0 || off+size > 8*len(b) {
		return 0, false
	}
	var v uint64
	for i := 0; i < size; i++ {
		bit := off + i
		if b[bit/8]&(1<<(bit%8)) != 0 {
			v |= 1 << i
		}
	}
	return uint32(v), true
}

func signExtend(v uint32, size int) int32 {
	if size < 32 && v&(1<<(size-1)) != 0 {
		return int32(v | ^uint32(0)<<size)
	}
	return int32(v)
}

func extUsageName(u uint32) string { return UsageName(uint16(u>>16), uint16(u)) }

// DecodeReport renders a report of the given kind ("input", "output",
// "feature") as it arrives in an interrupt transfer or a GET/SET_REPORT:
// pressed buttons and keys by name, other variables as name=value,
// array fields as the list of their active usages, e.g.
// "Left Shift keys=[Key b]" or "id=1 Button 1 X=120 Y=-3". Constant
// (padding) fields are skipped.
func (rd ReportDescriptor) DecodeReport(kind string, b []byte) (string, error) {
	const what = "hid report"
	var id uint8
	payload := b
	if rd.hasIDs() {
		if len(b) < 1 {
			return "", shortErr(what, 0, 1, 0)
		}
		id, payload = b[0], b[1:]
	}
	var parts []string
	if id != 0 {
		parts = append(parts, "id="+strconv.Itoa(int(id)))
	}
	found := false
	for _, f := range rd.Fields {
		if f.Kind != kind || f.ReportID != id {
			continue
		}
		found = true
		if f.Constant() || f.Size < 1 || f.Size > 32 {
			continue
		}
		if f.Variable() {
			for i := 0; i < f.Count; i++ {
				raw, ok := bitsAt(payload, f.BitOffset+i*f.Size, f.Size)
				if !ok {
					return strings.Join(parts, " "), shortErr(what, len(b), (f.BitOffset+(i+1)*f.Size+7)/8, len(payload))
				}
				u, ok := f.usage(i)
				name := "value" + strconv.Itoa(i)
				if ok {
					name = extUsageName(u)
				}
				if f.Size == 1 && f.LogicalMin == 0 {
					if raw != 0 {
						parts = append(parts, name)
					}
					continue
				}
				v := int64(raw)
				if f.LogicalMin < 0 {
					v = int64(signExtend(raw, f.Size))
				}
				parts = append(parts, name+"="+strconv.FormatInt(v, 10))
			}
			continue
		}
		var active []string
		for i := 0; i < f.Count; i++ {
			raw, ok := bitsAt(payload, f.BitOffset+i*f.Size, f.Size)
			if !ok {
				return strings.Join(parts, " "), shortErr(what, len(b), (f.BitOffset+(i+1)*f.Size+7)/8, len(payload))
			}
			v := int64(raw)
			if f.LogicalMin < 0 {
				v = int64(signExtend(raw, f.Size))
			}
			// Array fields hold indices; values outside the logical
			// range (and 0 when the range starts at 0 for keyboards'
			// "no event") select nothing.
			if v < int64(f.LogicalMin) || (f.LogicalMax > f.LogicalMin && v > int64(f.LogicalMax)) || v == 0 && f.LogicalMin == 0 {
				continue
			}
			idx := int(v - int64(f.LogicalMin))
			u, ok := f.usage(idx)
			if !ok {
				active = append(active, "index "+strconv.Itoa(idx))
				continue
			}
			if uint16(u>>16) == 0x07 && uint16(u) >= 1 && uint16(u) <= 3 {
				active = append(active, [...]string{"ErrorRollOver", "POSTFail", "ErrorUndefined"}[uint16(u)-1])
				continue
			}
			active = append(active, extUsageName(u))
		}
		if len(active) > 0 {
			label := "usages"
			if u, ok := f.usage(0); ok && uint16(u>>16) == 0x07 {
				label = "keys"
			}
			parts = append(parts, label+"=["+strings.Join(active, ",")+"]")
		}
	}
	if !found {
		return "", invalidErr(what, 0, "no %s report with id %d in the report descriptor", kind, id)
	}
	if len(parts) == 0 {
		return "(none)", nil
	}
	return strings.Join(parts, " "), nil
}
