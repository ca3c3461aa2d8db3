package regdb

import (
	"fmt"
	"strings"
)

// variantPos returns the position of variant name v in enum e.
func variantPos(e *Enum, v string) (int, bool) {
	for i, val := range e.Values {
		if val.Name == v {
			return i, true
		}
	}
	return 0, false
}

// firstVariantName returns the first variant name mentioned in spec.
func firstVariantName(spec string) string {
	for _, tok := range strings.Fields(spec) {
		for _, part := range strings.FieldsFunc(tok, func(r rune) bool { return r == '-' || r == ':' }) {
			if part != "" {
				return part
			}
		}
	}
	return ""
}

// matchVariant reports whether variant v of enum e is in spec.
func matchVariant(e *Enum, spec, v string) (bool, error) {
	pos, ok := variantPos(e, v)
	if !ok {
		return false, fmt.Errorf("variant %q is not a value of %q", v, e.Name)
	}
	for _, tok := range strings.Fields(spec) {
		in, err := matchToken(e, tok, pos)
		if err != nil {
			return false, err
		}
		if in {
			return true, nil
		}
	}
	return false, nil
}

func matchToken(e *Enum, tok string, pos int) (bool, error) {
	i := strings.IndexAny(tok, "-:")
	if i < 0 {
		p, ok := variantPos(e, tok)
		if !ok {
			return false, fmt.Errorf("unknown variant %q of %q", tok, e.Name)
		}
		return p == pos, nil
	}
	lo, hi := 0, len(e.Values)-1
	if a := tok[:i]; a != "" {
		p, ok := variantPos(e, a)
		if !ok {
			return false, fmt.Errorf("unknown variant %q of %q", a, e.Name)
		}
		lo = p
	}
	if b := tok[i+1:]; b != "" {
		p, ok := variantPos(e, b)
		if !ok {
			return false, fmt.Errorf("unknown variant %q of %q", b, e.Name)
		}
		hi = p
		if tok[i] == ':' {
			hi = p - 1
		}
	}
	return pos >= lo && pos <= hi, nil
}

// varsetFor returns the variant set of vs: its own, the inherited one, or
// the first enum defining the first variant named in the spec.
func (db *DB) varsetFor(vs Variants, inherited string) (*Enum, error) {
	name := vs.Varset
	if name == "" {
		name = inherited
	}
	if name != "" {
		e, ok := db.Enums[name]
		if !ok {
			return nil, fmt.Errorf("unknown varset %q", name)
		}
		return e, nil
	}
	first := firstVariantName(vs.Spec)
	for _, e := range db.enumList {
		if _, ok := variantPos(e, first); ok {
			return e, nil
		}
	}
	return nil, fmt.Errorf("no enum defines variant %q", first)
}

// checkVariants validates vs and fills in its variant set.
func (db *DB) checkVariants(vs *Variants, inherited string, pos Pos) error {
	if vs.Spec == "" {
		return nil
	}
	e, err := db.varsetFor(*vs, inherited)
	if err != nil {
		return pos.errorf("variants %q: %v", vs.Spec, err)
	}
	vs.Varset = e.Name
	for _, tok := range strings.Fields(vs.Spec) {
		if _, err := matchToken(e, tok, 0); err != nil {
			return pos.errorf("variants %q: %v", vs.Spec, err)
		}
	}
	return nil
}

// included reports whether an item with variants vs is present in the
// current selection. Items without variants, and items whose variant set
// has no selected variant, are always present.
func (db *DB) included(vs Variants) bool {
	if vs.Spec == "" || len(db.selected) == 0 {
		return true
	}
	v, ok := db.selected[vs.Varset]
	if !ok {
		return true
	}
	e := db.Enums[vs.Varset]
	if e == nil {
		return true
	}
	in, err := matchVariant(e, vs.Spec, v)
	return err == nil && in
}

// WithVariant returns a view of db restricted to the given variants:
// "V" (the variant set is the first enum defining V) or "SET=V", several
// separated by commas. The variant strings of the items are kept; the
// selection decides which items Lookup and Decode see.
func (db *DB) WithVariant(sel string) (*DB, error) {
	if strings.TrimSpace(sel) == "" {
		return db, nil
	}
	nd := *db
	nd.selected = map[string]string{}
	for k, v := range db.selected {
		nd.selected[k] = v
	}
	for _, item := range strings.Split(sel, ",") {
		item = strings.TrimSpace(item)
		set, v, hasSet := strings.Cut(item, "=")
		if !hasSet {
			v, set = set, ""
			for _, e := range db.enumList {
				if _, ok := variantPos(e, v); ok {
					set = e.Name
					break
				}
			}
			if set == "" {
				return nil, fmt.Errorf("regdb: variant %q: no enum defines it: %w", v, ErrNotFound)
			}
		}
		e, ok := db.Enums[set]
		if !ok {
			return nil, fmt.Errorf("regdb: variant set %q: %w", set, ErrNotFound)
		}
		if _, ok := variantPos(e, v); !ok {
			return nil, fmt.Errorf("regdb: variant %q is not in %q: %w", v, set, ErrNotFound)
		}
		nd.selected[set] = v
	}
	nd.Domains = make([]*Domain, len(db.Domains))
	nd.domains = make(map[string]*Domain, len(db.Domains))
	for i, d := range db.Domains {
		cp := *d
		cp.index = nil
		nd.Domains[i] = &cp
		nd.domains[cp.Name] = &cp
	}
	if err := nd.buildIndexes(); err != nil {
		return nil, err
	}
	return &nd, nil
}
