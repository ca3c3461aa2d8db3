package mmiotrace

import (
	"github.com/iotap/iotap/filter"
)

// FilterFields returns the fields a display filter (package filter) can
// name on mmiotrace records: mmio.kind ("R", "W", "MAP", ...), mmio.width,
// mmio.addr (the physical address), mmio.value, mmio.map_id, mmio.pc,
// mmio.pid, mmio.virt and mmio.len (MAP), mmio.text (MARK), mmio.time_ns;
// and, through bars, the PCI location of an access: mmio.pci
// ("0000:00:03.0"), mmio.bar (its index), mmio.offset (from the BAR's
// start), mmio.driver. bars must have observed every record before the
// one the predicate looks at (NewFilter does that); nil leaves the
// location fields absent. regdb.FilterFields adds the register names.
func FilterFields(bars *BARMap) *filter.Table[Record] {
	u := filter.Uint
	rw := func(get func(r *Record) uint64) func(*Record) (filter.Int, bool) {
		return func(r *Record) (filter.Int, bool) {
			return u(get(r)), r.Kind == KindRead || r.Kind == KindWrite
		}
	}
	isMap := func(get func(r *Record) uint64) func(*Record) (filter.Int, bool) {
		return func(r *Record) (filter.Int, bool) { return u(get(r)), r.Kind == KindMap }
	}
	loc := func(r *Record) (Location, bool) {
		if bars == nil || !r.Kind.IsAccess() {
			return Location{}, false
		}
		return bars.Lookup(r.Phys)
	}
	t := filter.NewTable(
		filter.Field[Record]{Name: "mmio.kind", Doc: "the record's keyword: R, W, MAP, UNMAP, MARK, UNKNOWN, VERSION, PCIDEV, LSPCI",
			Str: func(r *Record) (string, bool) { return r.Kind.String(), true }},
		filter.Field[Record]{Name: "mmio.width", Doc: "access width in bytes (R, W)",
			Num: rw(func(r *Record) uint64 { return uint64(r.Width) })},
		filter.Field[Record]{Name: "mmio.addr", Doc: "physical address (R, W, UNKNOWN, MAP)",
			Num: func(r *Record) (filter.Int, bool) {
				return u(r.Phys), r.Kind.IsAccess() || r.Kind == KindMap
			}},
		filter.Field[Record]{Name: "mmio.value", Doc: "value read or written (R, W)",
			Num: rw(func(r *Record) uint64 { return r.Value })},
		filter.Field[Record]{Name: "mmio.map_id", Doc: "id of the mapping (R, W, UNKNOWN, MAP, UNMAP)",
			Num: func(r *Record) (filter.Int, bool) {
				return filter.Signed(int64(r.MapID)), r.Kind.IsAccess() || r.Kind == KindMap || r.Kind == KindUnmap
			}},
		filter.Field[Record]{Name: "mmio.pc", Doc: "program counter of the access, when recorded",
			Num: func(r *Record) (filter.Int, bool) { return u(r.PC), r.Kind.IsAccess() && r.PC != 0 }},
		filter.Field[Record]{Name: "mmio.pid", Doc: "pid field of the record (0 in kernel logs)",
			Num: func(r *Record) (filter.Int, bool) {
				return filter.Signed(int64(r.PID)), r.Kind.IsAccess() || r.Kind == KindMap || r.Kind == KindUnmap
			}},
		filter.Field[Record]{Name: "mmio.virt", Doc: "kernel virtual address of a MAP",
			Num: isMap(func(r *Record) uint64 { return r.Virt })},
		filter.Field[Record]{Name: "mmio.len", Doc: "length of a MAP",
			Num: isMap(func(r *Record) uint64 { return r.Len })},
		filter.Field[Record]{Name: "mmio.text", Doc: "text of a MARK",
			Str: func(r *Record) (string, bool) { return string(r.Text), r.Kind == KindMark }},
		filter.Field[Record]{Name: "mmio.time_ns", Doc: "timestamp in nanoseconds (the log's seconds × 10⁹)",
			Num: func(r *Record) (filter.Int, bool) { return u(r.Time.NS), r.Kind != KindComment && r.Kind != KindOther }},
		filter.Field[Record]{Name: "mmio.pci", Doc: "PCI address of the device whose BAR holds the access",
			Str: func(r *Record) (string, bool) {
				l, ok := loc(r)
				if !ok {
					return "", false
				}
				return l.BAR.Addr.String(), true
			}},
		filter.Field[Record]{Name: "mmio.bar", Doc: "index of the BAR holding the access (0-5, 6: ROM)",
			Num: func(r *Record) (filter.Int, bool) {
				l, ok := loc(r)
				if !ok {
					return filter.Int{}, false
				}
				return u(uint64(l.BAR.Index)), true
			}},
		filter.Field[Record]{Name: "mmio.offset", Doc: "offset of the access from its BAR's start",
			Num: func(r *Record) (filter.Int, bool) {
				l, ok := loc(r)
				return u(l.Offset), ok
			}},
		filter.Field[Record]{Name: "mmio.driver", Doc: "driver of the device, as its PCIDEV line names it",
			Str: func(r *Record) (string, bool) {
				l, ok := loc(r)
				if !ok || l.BAR.Driver == "" {
					return "", false
				}
				return l.BAR.Driver, true
			}},
	)
	t.Alias("mmio.type", "mmio.kind")
	t.Alias("mmio.phys", "mmio.addr")
	return t
}

// NewFilter returns the predicate of a display-filter expression over
// the fields of t (FilterFields(bars), maybe extended), wrapped so that
// bars observes every record first: the predicate must see every record
// of the log, in order.
func NewFilter(expr string, t *filter.Table[Record], bars *BARMap) (func(*Record) bool, error) {
	p, err := filter.ParseCompile(expr, t)
	if err != nil {
		return nil, err
	}
	if bars == nil {
		return p, nil
	}
	return func(r *Record) bool {
		bars.Observe(r)
		return p(r)
	}, nil
}

// ParseFilter is NewFilter over FilterFields with a BAR map of its own.
func ParseFilter(expr string) (func(*Record) bool, error) {
	bars := NewBARMap()
	return NewFilter(expr, FilterFields(bars), bars)
}
