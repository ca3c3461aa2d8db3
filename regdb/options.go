package regdb

import (
	"errors"
	"fmt"
)

// NamerOptions choose the databases and bindings of a Namer as the
// options of 'iotap mmio names' give them.
type NamerOptions struct {
	DBs     []string // --db: database files or shipped names (Open)
	Variant string   // --variant: V or SET=V (Binder.SetVariant)
	BARs    []string // --bar: PCIADDR/N=DOMAIN or VENDOR:DEVICE/N=DOMAIN (ParseBARRule)
}

// ErrOption matches the errors of NewNamerFrom that are the caller's
// mistake: a database, variant or domain that does not exist, a BAR rule
// that does not parse. Their words start with the option (--db,
// --variant, --bar). A database file that does not parse is not one.
var ErrOption = errors.New("regdb: bad option")

type optionError struct{ err error }

func (e *optionError) Error() string        { return e.err.Error() }
func (e *optionError) Unwrap() error        { return e.err }
func (e *optionError) Is(target error) bool { return target == ErrOption }

// NewNamerFrom returns the Namer of o: its databases opened, the variant
// applied, the BAR rules added (without DBs, the shipped databases are
// chosen by each device's PCI id).
func NewNamerFrom(o NamerOptions) (*Namer, error) {
	n := NewNamer(Binder{})
	for _, s := range o.DBs {
		db, err := Open(s)
		if errors.Is(err, ErrNotFound) {
			return nil, &optionError{fmt.Errorf("--db %w", err)}
		} else if err != nil {
			return nil, err
		}
		n.DBs = append(n.DBs, db)
	}
	if err := n.SetVariant(o.Variant); errors.Is(err, ErrNotFound) {
		if len(n.DBs) == 0 {
			err = fmt.Errorf("%w (give the database with --db)", err)
		}
		return nil, &optionError{fmt.Errorf("--%w", err)}
	} else if err != nil {
		return nil, err
	}
	for _, s := range o.BARs {
		b, err := ParseBARRule(s)
		if err == nil {
			err = n.AddRule(b)
		}
		if err != nil {
			return nil, &optionError{fmt.Errorf("--bar %q: %w", s, err)}
		}
	}
	return n, nil
}
