package regdb

import (
	"github.com/iotap/iotap/filter"
	"github.com/iotap/iotap/mmiotrace"
)

// FilterFields is mmiotrace.FilterFields(bars) plus the names b gives an
// access: mmio.reg, the register's name as 'iotap mmio names' prints it
// ("CTRL", "RAL[0]"), and mmio.domain, the register database's domain of
// the BAR ("E1000"). Both are absent for accesses no database names.
func FilterFields(b *Binder, bars *mmiotrace.BARMap) *filter.Table[mmiotrace.Record] {
	t := mmiotrace.FilterFields(bars)
	named := func(r *mmiotrace.Record) (Match, *Binding, bool) {
		if !r.Kind.IsAccess() {
			return Match{}, nil, false
		}
		loc, ok := bars.Lookup(r.Phys)
		if !ok {
			return Match{}, nil, false
		}
		return b.Name(loc, int(r.Width))
	}
	var buf []byte
	t.Add(filter.Field[mmiotrace.Record]{Name: "mmio.reg", Doc: "register name from the register databases (iotap mmio read: the shipped ones)",
		Str: func(r *mmiotrace.Record) (string, bool) {
			m, _, ok := named(r)
			if !ok {
				return "", false
			}
			buf = m.AppendName(buf[:0])
			return string(buf), true
		}})
	t.Add(filter.Field[mmiotrace.Record]{Name: "mmio.domain", Doc: "register database domain of the access's BAR",
		Str: func(r *mmiotrace.Record) (string, bool) {
			_, bd, _ := named(r)
			if bd == nil {
				return "", false
			}
			return bd.Domain.Name, true
		}})
	t.Alias("mmio.register", "mmio.reg")
	return t
}

// ParseFilter returns the predicate of a display-filter expression over
// FilterFields, with a BAR map of its own that observes every record: the
// predicate must see every record of the log, in order.
func ParseFilter(expr string, b *Binder) (func(*mmiotrace.Record) bool, error) {
	bars := mmiotrace.NewBARMap()
	return mmiotrace.NewFilter(expr, FilterFields(b, bars), bars)
}
