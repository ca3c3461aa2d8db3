package mmiotrace

import (
	"fmt"
	"strings"
	"time"
)

// FilterArgs are the criteria of a Filter as a command line writes them
// ('iotap mmio filter'): Filter parses them.
type FilterArgs struct {
	Kinds       []string // R, W, MAP, ... (each may be a comma-separated list)
	Read, Write bool     // add R, W
	Widths      []int    // 1, 2, 4, 8
	Addrs, BARs []string // ParseAddrRange, ParseBARRange
	MapIDs      []int32
	Value       string // ParseValueMask
}

// Filter parses the arguments into a Filter. An error names the flag
// (--kind, --width, --addr, --bar, --value) whose value is bad.
func (a FilterArgs) Filter() (*Filter, error) {
	f := &Filter{MapIDs: a.MapIDs}
	for _, k := range a.Kinds {
		for _, s := range strings.Split(k, ",") {
			kind, ok := ParseKind(strings.TrimSpace(s))
			if !ok {
				return nil, fmt.Errorf("--kind %q: want R, W, MAP, UNMAP, MARK, VERSION, LSPCI, PCIDEV, UNKNOWN, comment or other", s)
			}
			f.Kinds.Add(kind)
		}
	}
	if a.Read {
		f.Kinds.Add(KindRead)
	}
	if a.Write {
		f.Kinds.Add(KindWrite)
	}
	for _, w := range a.Widths {
		if w != 1 && w != 2 && w != 4 && w != 8 {
			return nil, fmt.Errorf("--width %d: want 1, 2, 4 or 8", w)
		}
		f.Widths |= 1 << w
	}
	var err error
	if f.Ranges, f.BARs, err = ParseRanges(a.Addrs, a.BARs); err != nil {
		return nil, err
	}
	if a.Value != "" {
		m, b, err := ParseValueMask(a.Value)
		if err != nil {
			return nil, fmt.Errorf("--value: %v", err)
		}
		f.ValueMask, f.ValueBits = m, b
	}
	return f, nil
}

// ParseRanges parses physical ranges (ParseAddrRange) and BAR-relative
// ranges (ParseBARRange), as --addr and --bar write them; an error names
// the flag.
func ParseRanges(addrs, bars []string) ([]AddrRange, []BARRange, error) {
	var rs []AddrRange
	var bs []BARRange
	for _, a := range addrs {
		r, err := ParseAddrRange(a)
		if err != nil {
			return nil, nil, fmt.Errorf("--addr: %v", err)
		}
		rs = append(rs, r)
	}
	for _, b := range bars {
		br, err := ParseBARRange(b)
		if err != nil {
			return nil, nil, fmt.Errorf("--bar: %v", err)
		}
		bs = append(bs, br)
	}
	return rs, bs, nil
}

// ParsePacing parses a replay pace as --pace writes it: fast (or ""),
// recorded, or fixed, which needs a delay.
func ParsePacing(pace string, delay time.Duration) (Pacing, error) {
	switch pace {
	case "fast", "":
		return PaceFast, nil
	case "recorded":
		return PaceRecorded, nil
	case "fixed":
		if delay <= 0 {
			return 0, fmt.Errorf("--pace fixed needs --delay")
		}
		return PaceFixed, nil
	}
	return 0, fmt.Errorf("--pace %q: want fast, recorded or fixed", pace)
}
