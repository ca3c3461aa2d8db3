package mmiotrace

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// KindSet is a set of record kinds (bit k set: Kind k included).
type KindSet uint16

// Has reports whether k is in the set.
func (s KindSet) Has(k Kind) bool { return s&(1<<k) != 0 }

// Add adds k to the set.
func (s *KindSet) Add(k Kind) { *s |= 1 << k }

// AddrRange is the physical address range [Lo, Hi).
type AddrRange struct{ Lo, Hi uint64 }

// Contains reports whether a lies in the range.
func (r AddrRange) Contains(a uint64) bool { return a >= r.Lo && a < r.Hi }

// BARRange selects offsets [Lo, Hi) of BAR Index of a device named by its
// PCI address or, when ByID is set, by its vendor:device id.
type BARRange struct {
	Addr           PCIAddr
	ByID           bool
	Vendor, Device uint16
	Index          int
	Lo, Hi         uint64
}

// ParseBARRange parses "0000:00:04.0/0+0x0..0x100" (PCI address, BAR index,
// offset range [lo, hi)) or "8086:100e/0+0x0..0x100" (vendor:device id).
// The range part is optional ("0000:00:04.0/0" is the whole BAR).
func ParseBARRange(s string) (BARRange, error) {
	var br BARRange
	dev, rest, ok := strings.Cut(s, "/")
	if !ok {
		return br, fmt.Errorf("bar range %q: want PCIADDR/BAR+LO..HI or VENDOR:DEVICE/BAR+LO..HI", s)
	}
	if a, err := ParsePCIAddr(dev); err == nil {
		br.Addr = a
	} else {
		v, d, ok := strings.Cut(dev, ":")
		vv, ok1 := hexN(v)
		dd, ok2 := hexN(d)
		if !ok || !ok1 || !ok2 || len(v) != 4 || len(d) != 4 {
			return br, fmt.Errorf("bar range %q: %q is neither a PCI address (0000:00:04.0) nor a vendor:device id (8086:100e)", s, dev)
		}
		br.ByID, br.Vendor, br.Device = true, uint16(vv), uint16(dd)
	}
	idx, rng, hasRange := strings.Cut(rest, "+")
	n, err := strconv.Atoi(idx)
	if err != nil || n < 0 || n > 6 {
		return br, fmt.Errorf("bar range %q: BAR index %q not in 0..6", s, idx)
	}
	br.Index = n
	br.Hi = ^uint64(0)
	if hasRange {
		r, err := ParseAddrRange(rng)
		if err != nil {
			return br, fmt.Errorf("bar range %q: %w", s, err)
		}
		br.Lo, br.Hi = r.Lo, r.Hi
	}
	return br, nil
}

// ParseAddrRange parses "LO..HI" or "LO-HI" ([LO, HI), numbers in C
// syntax: 0x hex, decimal) or a single address.
func ParseAddrRange(s string) (AddrRange, error) {
	lo, hi, ok := strings.Cut(s, "..")
	if !ok {
		lo, hi, ok = strings.Cut(s, "-")
	}
	l, err := strconv.ParseUint(lo, 0, 64)
	if err != nil {
		return AddrRange{}, fmt.Errorf("address range %q: bad start: %w", s, errors.Unwrap(err))
	}
	if !ok {
		return AddrRange{Lo: l, Hi: l + 1}, nil
	}
	h, err := strconv.ParseUint(hi, 0, 64)
	if err != nil {
		return AddrRange{}, fmt.Errorf("address range %q: bad end: %w", s, errors.Unwrap(err))
	}
	if h <= l {
		return AddrRange{}, fmt.Errorf("address range %q: end not above start", s)
	}
	return AddrRange{Lo: l, Hi: h}, nil
}

// Filter selects records. Structural records (VERSION, PCIDEV, LSPCI,
// MAP, UNMAP, comments) and the kernel's lost-events marks always pass, so
// the output stays a valid, interpretable log. The other criteria combine
// with AND; zero values select everything. Address, width, value and map
// criteria apply to accesses (R, W, UNKNOWN); marks pass them.
type Filter struct {
	Kinds     KindSet // empty: all kinds
	Widths    uint16  // bit w set: width w bytes; 0: all
	ValueMask uint64  // with ValueBits: keep R/W whose Value&ValueMask == ValueBits
	ValueBits uint64
	Ranges    []AddrRange // physical ranges, any of them
	BARs      []BARRange  // BAR-relative ranges, any of them (resolved via PCIDEV)
	MapIDs    []int32     // any of them
	HasStart  bool        // keep records at or after Start (ns)
	Start     uint64
	HasEnd    bool // keep records before End (ns)
	End       uint64
	// Between keeps records from a MARK containing Between[0] up to and
	// including the next MARK containing Between[1] (empty: end of log).
	Between [2]string

	resolved []AddrRange
	isRes    bool
}

// Resolve turns the BAR-relative ranges into physical ranges using the
// BARs the map knows. It fails when a BAR is not described by any PCIDEV
// record.
func (f *Filter) Resolve(m *BARMap) error {
	f.resolved = f.resolved[:0]
	for _, b := range f.BARs {
		var bars []*BAR
		if b.ByID {
			bars = m.FindByID(b.Vendor, b.Device, b.Index)
		} else if bar, ok := m.Find(b.Addr, b.Index); ok {
			bars = []*BAR{bar}
		}
		if len(bars) == 0 {
			name := b.Addr.String()
			if b.ByID {
				name = fmt.Sprintf("%04x:%04x", b.Vendor, b.Device)
			}
			return fmt.Errorf("mmiotrace: filter: no PCIDEV record describes memory BAR %d of %s", b.Index, name)
		}
		for _, bar := range bars {
			hi := min(b.Hi, bar.Size)
			if b.Lo < hi {
				f.resolved = append(f.resolved, AddrRange{Lo: bar.Start + b.Lo, Hi: bar.Start + hi})
			}
		}
	}
	f.isRes = true
	return nil
}

// NeedsBARs reports whether Resolve must be called before Match.
func (f *Filter) NeedsBARs() bool { return len(f.BARs) > 0 && !f.isRes }

// Stateless reports whether Match decides each record alone (no marker
// window), so that records may be filtered in parallel.
func (f *Filter) Stateless() bool { return f.Between[0] == "" }

// Match decides one record without state (the marker window is handled by
// Stream). Resolve must have been called when BARs are set.
func (f *Filter) Match(r *Record) bool {
	k := r.Kind
	if k.IsStructural() {
		return true
	}
	if k == KindMark && bytes.HasPrefix(r.Text, lostPrefix) {
		if _, ok := r.Lost(); ok {
			return true
		}
	}
	if f.Kinds != 0 && !f.Kinds.Has(k) {
		return false
	}
	if k == KindOther {
		return true
	}
	if (f.HasStart && r.Time.NS < f.Start) || (f.HasEnd && r.Time.NS >= f.End) {
		return false
	}
	if !k.IsAccess() {
		return true
	}
	return f.matchAccess(r)
}

// matchRW is Match for an R or W record.
func (f *Filter) matchRW(r *Record) bool {
	if f.Kinds != 0 && !f.Kinds.Has(r.Kind) {
		return false
	}
	if (f.HasStart && r.Time.NS < f.Start) || (f.HasEnd && r.Time.NS >= f.End) {
		return false
	}
	return f.matchAccess(r)
}

// matchAccess applies the access criteria (width, value, map id,
// address) to an R, W or UNKNOWN record.
func (f *Filter) matchAccess(r *Record) bool {
	k := r.Kind
	if f.Widths != 0 && (k == KindUnknown || f.Widths&(1<<r.Width) == 0) {
		return false
	}
	if f.ValueMask != 0 && (k == KindUnknown || r.Value&f.ValueMask != f.ValueBits) {
		return false
	}
	if len(f.MapIDs) > 0 {
		found := false
		for _, id := range f.MapIDs {
			if id == r.MapID {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if len(f.Ranges) > 0 || len(f.BARs) > 0 {
		found := false
		for _, rg := range f.Ranges {
			if rg.Contains(r.Phys) {
				found = true
				break
			}
		}
		for _, rg := range f.resolved {
			if rg.Contains(r.Phys) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Stream applies a Filter to records in log order, keeping the state the
// marker window and BAR resolution need.
type Stream struct {
	f        *Filter
	bars     *BARMap
	inWindow bool
}

// NewStream returns a Stream for f. BARs are resolved from the PCIDEV
// records as they pass.
func NewStream(f *Filter) *Stream { return &Stream{f: f, bars: NewBARMap()} }

// Keep reports whether r passes. It returns an error when a BAR range
// cannot be resolved by the time the first access arrives.
func (s *Stream) Keep(r *Record) (bool, error) {
	f := s.f
	switch r.Kind {
	case KindPCIDev:
		s.bars.AddPCIDev(&r.PCI)
	case KindRead, KindWrite, KindUnknown:
		if f.NeedsBARs() {
			if err := f.Resolve(s.bars); err != nil {
				return false, err
			}
		}
	}
	if f.Between[0] != "" && !r.Kind.IsStructural() {
		if _, lost := r.Lost(); !lost {
			if r.Kind == KindMark {
				if !s.inWindow && bytes.Contains(r.Text, []byte(f.Between[0])) {
					s.inWindow = true
					return f.Match(r), nil
				}
				if s.inWindow && f.Between[1] != "" && bytes.Contains(r.Text, []byte(f.Between[1])) {
					s.inWindow = false
					return f.Match(r), nil
				}
			}
			if !s.inWindow {
				return false, nil
			}
		}
	}
	return f.Match(r), nil
}

// ParseValueMask parses MASK[=BITS] ('iotap mmio filter --value'): the
// accesses whose value has BITS under MASK (BITS defaults to MASK: all
// of them set). Numbers in C syntax (0x hex, 0 octal).
func ParseValueMask(s string) (mask, bits uint64, err error) {
	m, b, hasBits := strings.Cut(s, "=")
	mask, err = strconv.ParseUint(m, 0, 64)
	if err != nil || mask == 0 {
		return 0, 0, fmt.Errorf("bad mask %q", m)
	}
	bits = mask
	if hasBits {
		if bits, err = strconv.ParseUint(b, 0, 64); err != nil {
			return 0, 0, fmt.Errorf("bad bits %q", b)
		}
		if bits&^mask != 0 {
			return 0, 0, fmt.Errorf("bits 0x%x outside mask 0x%x", bits, mask)
		}
	}
	return mask, bits, nil
}
