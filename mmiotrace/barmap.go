package mmiotrace

import "sort"

// BAR is one memory resource of a PCI device as described by a PCIDEV
// record.
type BAR struct {
	Addr   PCIAddr
	Vendor uint16
	Device uint16
	Index  int    // 0..5 for BARs, 6 for the expansion ROM
	Start  uint64 // physical start address (flag bits removed)
	Size   uint64
	Flags  uint8 // the low 4 bits printed with the base (bit 3: prefetchable)
	Driver string
}

// Contains reports whether phys lies inside the BAR.
func (b *BAR) Contains(phys uint64) bool { return phys >= b.Start && phys-b.Start < b.Size }

// Location is a physical address resolved to a device BAR.
type Location struct {
	BAR    *BAR
	Offset uint64 // from the start of the BAR
}

// Mapping is a live ioremap seen in a MAP record.
type Mapping struct {
	ID   int32
	Phys uint64
	Virt uint64
	Len  uint64
	Time Timestamp
}

// BARMap resolves physical addresses to PCI BARs (learned from PCIDEV
// records) and map ids to mappings (from MAP/UNMAP records). Feed it
// every record with Observe, or PCIDEV data with AddPCIDev. The zero value
// is not ready; use NewBARMap.
type BARMap struct {
	bars []*BAR // memory BARs sorted by Start
	maps map[int32]Mapping
	last *BAR
}

// NewBARMap returns an empty map.
func NewBARMap() *BARMap { return &BARMap{maps: make(map[int32]Mapping)} }

// AddPCIDev adds the memory BARs of a PCIDEV record (I/O port resources
// are not memory-mapped and are skipped). A device seen again replaces
// its earlier BARs.
func (m *BARMap) AddPCIDev(p *PCIDev) {
	addr := p.Addr()
	kept := m.bars[:0]
	for _, b := range m.bars {
		if b.Addr != addr {
			kept = append(kept, b)
		}
	}
	m.bars = kept
	for i := 0; i < 7; i++ {
		if p.Size[i] == 0 || p.BARIsIO(i) {
			continue
		}
		m.bars = append(m.bars, &BAR{
			Addr: addr, Vendor: p.Vendor, Device: p.Device, Index: i,
			Start: p.BARStart(i), Size: p.Size[i], Flags: uint8(p.Base[i] & 0xf),
			Driver: string(p.Driver),
		})
	}
	sort.SliceStable(m.bars, func(i, j int) bool { return m.bars[i].Start < m.bars[j].Start })
	m.last = nil
}

// Observe updates the map from a PCIDEV, MAP or UNMAP record; other
// records are ignored.
func (m *BARMap) Observe(r *Record) {
	switch r.Kind {
	case KindPCIDev:
		m.AddPCIDev(&r.PCI)
	case KindMap:
		m.maps[r.MapID] = Mapping{ID: r.MapID, Phys: r.Phys, Virt: r.Virt, Len: r.Len, Time: r.Time}
	case KindUnmap:
		delete(m.maps, r.MapID)
	}
}

// BARs returns the known memory BARs sorted by start address.
func (m *BARMap) BARs() []*BAR { return m.bars }

// Lookup resolves a physical address to the BAR containing it.
func (m *BARMap) Lookup(phys uint64) (Location, bool) {
	if b := m.last; b != nil && b.Contains(phys) {
		return Location{BAR: b, Offset: phys - b.Start}, true
	}
	i := sort.Search(len(m.bars), func(i int) bool { return m.bars[i].Start > phys })
	for j := i - 1; j >= 0; j-- {
		if b := m.bars[j]; b.Contains(phys) {
			m.last = b
			return Location{BAR: b, Offset: phys - b.Start}, true
		}
	}
	return Location{}, false
}

// Find returns BAR index of the device at addr.
func (m *BARMap) Find(addr PCIAddr, index int) (*BAR, bool) {
	for _, b := range m.bars {
		if b.Addr == addr && b.Index == index {
			return b, true
		}
	}
	return nil, false
}

// FindByID returns BAR index of every device with the vendor:device id.
func (m *BARMap) FindByID(vendor, device uint16, index int) []*BAR {
	var out []*BAR
	for _, b := range m.bars {
		if b.Vendor == vendor && b.Device == device && b.Index == index {
			out = append(out, b)
		}
	}
	return out
}

// Mapping returns the live mapping with the id (from MAP, until UNMAP).
func (m *BARMap) Mapping(id int32) (Mapping, bool) {
	mp, ok := m.maps[id]
	return mp, ok
}

// MapOffset resolves an access through its map id when no PCIDEV record
// describes the BAR (logs read from the tracefs "trace" file have none):
// it returns the live mapping and the offset of phys inside it.
func (m *BARMap) MapOffset(id int32, phys uint64) (Mapping, uint64, bool) {
	mp, ok := m.maps[id]
	if !ok || phys < mp.Phys || phys-mp.Phys >= mp.Len {
		return Mapping{}, 0, false
	}
	return mp, phys - mp.Phys, true
}
