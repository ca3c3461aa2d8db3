package regdb

import "github.com/iotap/iotap/mmiotrace"

// BARRule binds a BAR to a domain explicitly (iotap mmio names --bar), for
// databases without PCI ids: by PCI id (ByID) or by PCI address, and BAR
// index.
type BARRule struct {
	ByID   bool
	ID     PCIID             // when ByID
	Addr   mmiotrace.PCIAddr // else
	Index  int
	Domain string
	Used   bool   // set once the rule bound a BAR
	Text   string // the rule as written (ParseBARRule), for messages
}

func (r *BARRule) matches(bar *mmiotrace.BAR) bool {
	if r.Index != bar.Index {
		return false
	}
	if r.ByID {
		return r.ID == PCIID{Vendor: bar.Vendor, Device: bar.Device}
	}
	return r.Addr.Bus == bar.Addr.Bus && r.Addr.Dev == bar.Addr.Dev && r.Addr.Fn == bar.Addr.Fn
}

// Binding is the database domain chosen for one BAR.
type Binding struct {
	DB     *DB
	Domain *Domain
}

// Binder is iotap's one binding of the PCI BARs of an MMIO trace to
// register database domains, and of accesses to registers: 'iotap mmio
// names', 'iotap mmio stats', the timeline and the report all name an
// access through it, so they name it the same way.
//
// A BAR is bound by, in order: an explicit rule (Rules); a domain of DBs
// declaring the device's PCI id and BAR; without DBs, a shipped database
// declaring them (with Variant applied when it defines it). The zero
// Binder uses the shipped databases.
type Binder struct {
	DBs     []*DB
	Variant string
	Rules   []BARRule
	bound   map[*mmiotrace.BAR]*Binding // nil value: no database
}

// FindDomain looks for a domain by name in DBs, then (without DBs) in the
// shipped databases.
func (b *Binder) FindDomain(name string) (*DB, *Domain, bool) {
	for _, db := range b.DBs {
		if d, ok := db.Domain(name); ok {
			return db, d, true
		}
	}
	if len(b.DBs) == 0 {
		for _, n := range Builtins() {
			db, err := Builtin(n)
			if err != nil {
				continue
			}
			if d, ok := db.Domain(name); ok {
				db, d = b.withVariant(db, d)
				return db, d, true
			}
		}
	}
	return nil, nil, false
}

func (b *Binder) withVariant(db *DB, d *Domain) (*DB, *Domain) {
	if b.Variant == "" {
		return db, d
	}
	v, err := db.WithVariant(b.Variant)
	if err != nil {
		return db, d
	}
	if vd, ok := v.Domain(d.Name); ok {
		return v, vd
	}
	return db, d
}

// Bind returns the domain of bar, or nil when no database describes it.
// The choice is remembered per BAR.
func (b *Binder) Bind(bar *mmiotrace.BAR) *Binding {
	if out, ok := b.bound[bar]; ok {
		return out
	}
	if b.bound == nil {
		b.bound = map[*mmiotrace.BAR]*Binding{}
	}
	var out *Binding
	for i := range b.Rules {
		r := &b.Rules[i]
		if r.matches(bar) {
			if db, d, ok := b.FindDomain(r.Domain); ok {
				r.Used = true
				out = &Binding{db, d}
				break
			}
		}
	}
	id := PCIID{Vendor: bar.Vendor, Device: bar.Device}
	if out == nil {
		for _, db := range b.DBs {
			if d, ok := db.ForPCI(id, bar.Index); ok {
				out = &Binding{db, d}
				break
			}
		}
	}
	if out == nil && len(b.DBs) == 0 {
		if db, d, ok := BuiltinForPCI(id, bar.Index); ok {
			db, d = b.withVariant(db, d)
			out = &Binding{db, d}
		}
	}
	b.bound[bar] = out
	return out
}

// Name names an access of width bytes at loc: the register it hits in
// its BAR's domain (offsets in units of the domain's width), and the
// binding (nil when no database describes the BAR).
func (b *Binder) Name(loc mmiotrace.Location, width int) (Match, *Binding, bool) {
	bd := b.Bind(loc.BAR)
	if bd == nil {
		return Match{}, nil, false
	}
	unit := uint64(bd.Domain.Width / 8)
	if unit == 0 {
		unit = 1
	}
	if loc.Offset%unit != 0 {
		return Match{}, bd, false
	}
	m, ok := bd.DB.LookupIn(bd.Domain, loc.Offset/unit, uint(width)*8)
	return m, bd, ok
}

// RegisterNames returns the name of each register of st (mmiotrace
// Analyze: 'iotap mmio stats') as b names its accesses, "" where no
// database describes it: with the zero Binder, the database shipped for
// the device's PCI id.
func (b *Binder) RegisterNames(st *mmiotrace.Stats) func(mmiotrace.RegKey) string {
	bars := map[mmiotrace.RegKey]*mmiotrace.BAR{}
	for _, r := range st.Regs {
		bars[r.Key] = r.BAR
	}
	return func(k mmiotrace.RegKey) string {
		bar := bars[k]
		if bar == nil {
			return ""
		}
		m, _, ok := b.Name(mmiotrace.Location{BAR: bar, Offset: k.Offset}, int(k.Width))
		if !ok {
			return ""
		}
		return m.Name()
	}
}
