package regdb

import (
	"slices"
	"strings"
)

// resolve turns type references into types, validates variants and widths,
// and builds the lookup indexes. It runs once after all files are read.
func (db *DB) resolve() error {
	for _, e := range db.enumList {
		if err := db.checkVariants(&e.Variants, "", e.Pos); err != nil {
			return err
		}
		for _, v := range e.Values {
			if err := db.checkVariants(&v.Variants, e.Variants.Varset, v.Pos); err != nil {
				return err
			}
		}
	}
	for _, name := range sortedKeys(db.Bitsets) {
		bs := db.Bitsets[name]
		if err := db.checkVariants(&bs.Variants, "", bs.Pos); err != nil {
			return err
		}
		if err := db.resolveFields(bs.Fields, bs.Variants.Varset, 64); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(db.Groups) {
		g := db.Groups[name]
		if err := db.resolveItems(g.Items, nil, "", 0); err != nil {
			return err
		}
	}
	for _, d := range db.Domains {
		if err := db.checkVariants(&d.Variants, "", d.Pos); err != nil {
			return err
		}
		if err := db.resolveItems(d.Items, d, d.Variants.Varset, 0); err != nil {
			return err
		}
	}
	return db.buildIndexes()
}

func (db *DB) resolveItems(items []Node, d *Domain, varset string, depth int) error {
	if depth > maxNesting {
		return &SyntaxError{File: "", Msg: "nesting too deep"}
	}
	for _, it := range items {
		switch n := it.(type) {
		case *Register:
			if err := db.checkVariants(&n.Variants, varset, n.Pos); err != nil {
				return err
			}
			if d != nil && d.Width > n.Width {
				return n.Pos.errorf("register %s: %d bits is narrower than the %d-bit units of domain %s", n.Name, n.Width, d.Width, d.Name)
			}
			if n.Type.Bitset != nil || n.Type.Enum != nil {
				continue // already resolved (register shared through a group)
			}
			vs := varset
			if n.Variants.Varset != "" {
				vs = n.Variants.Varset
			}
			if err := db.resolveFields(n.fields, vs, n.Width); err != nil {
				return err
			}
			if err := db.checkValues(n.values, vs); err != nil {
				return err
			}
			t, err := db.resolveType(n.typeRef, n.fields, n.values, n.Width, n.Pos)
			if err != nil {
				return err
			}
			n.Type = t
		case *Array:
			if err := db.checkVariants(&n.Variants, varset, n.Pos); err != nil {
				return err
			}
			if n.Stride == 0 && n.Length > 1 {
				what := "stripe"
				if !n.Stripe {
					what = "array"
				}
				if n.Name != "" {
					what += " " + n.Name
				}
				return n.Pos.errorf("%s: stride 0 with length %d", what, n.Length)
			}
			vs := varset
			if n.Variants.Varset != "" {
				vs = n.Variants.Varset
			}
			if err := db.resolveItems(n.Items, d, vs, depth+1); err != nil {
				return err
			}
		case *UseGroup:
			if _, ok := db.Groups[n.Name]; !ok {
				return n.Pos.errorf("use-group: unknown group %q", n.Name)
			}
		}
	}
	return nil
}

func (db *DB) resolveFields(fs []*Bitfield, varset string, width uint) error {
	for _, f := range fs {
		if err := db.checkVariants(&f.Variants, varset, f.Pos); err != nil {
			return err
		}
		if f.Low > f.High || f.High >= width {
			return f.Pos.errorf("bitfield %s: bits %d..%d do not fit %d bits", f.Name, f.Low, f.High, width)
		}
		if f.Type.Bitset != nil || f.Type.Enum != nil {
			continue
		}
		vs := varset
		if f.Variants.Varset != "" {
			vs = f.Variants.Varset
		}
		if err := db.checkValues(f.values, vs); err != nil {
			return err
		}
		t, err := db.resolveType(f.typeRef, nil, f.values, f.High-f.Low+1, f.Pos)
		if err != nil {
			return err
		}
		f.Type = t
	}
	return nil
}

func (db *DB) checkValues(vals []*Value, varset string) error {
	for _, v := range vals {
		if err := db.checkVariants(&v.Variants, varset, v.Pos); err != nil {
			return err
		}
	}
	return nil
}

// resolveType applies the rnndb rules: an explicit type (builtin, enum,
// bitset or domain name), else "bitset" with inline bitfields, else "enum"
// with inline values, else boolean for one bit, else hex.
func (db *DB) resolveType(ref string, fields []*Bitfield, values []*Value, width uint, pos Pos) (Type, error) {
	inlineBitset := func() *Bitset { return &Bitset{Inline: true, Fields: fields, Pos: pos} }
	inlineEnum := func() *Enum { return &Enum{Inline: true, Values: values, Pos: pos} }
	toks := strings.Fields(ref)
	if len(toks) == 0 {
		switch {
		case len(fields) > 0:
			return Type{Kind: KindBitset, Bitset: inlineBitset()}, nil
		case len(values) > 0:
			return Type{Kind: KindEnum, Enum: inlineEnum()}, nil
		case width == 1:
			return Type{Kind: KindBool}, nil
		}
		return Type{Kind: KindHex}, nil
	}
	var firstErr error
	for _, tok := range toks {
		t := Type{Ref: ref}
		switch tok {
		case "hex", "a", "waddr":
			t.Kind = KindHex
		case "uint", "fixed", "ufixed":
			t.Kind = KindUint
		case "int":
			t.Kind = KindInt
		case "boolean":
			t.Kind = KindBool
		case "float":
			t.Kind = KindFloat
		case "enum":
			t.Kind, t.Enum = KindEnum, inlineEnum()
		case "bitset":
			t.Kind, t.Bitset = KindBitset, inlineBitset()
		default:
			if e, ok := db.Enums[tok]; ok {
				t.Kind, t.Enum = KindEnum, e
				if len(values) > 0 {
					t.Enum = &Enum{Inline: true, Values: append(append([]*Value(nil), values...), e.Values...), Pos: pos}
				}
			} else if bs, ok := db.Bitsets[tok]; ok {
				t.Kind, t.Bitset = KindBitset, bs
				if len(fields) > 0 {
					t.Bitset = &Bitset{Inline: true, Fields: append(append([]*Bitfield(nil), fields...), bs.Fields...), Pos: pos}
				}
			} else if _, ok := db.domains[tok]; ok {
				t.Kind = KindAddress
			} else {
				if firstErr == nil {
					firstErr = pos.errorf("unknown type %q", tok)
				}
				continue
			}
		}
		if t.Kind != KindBitset && len(fields) > 0 {
			t = Type{Kind: KindBitset, Ref: ref, Bitset: inlineBitset()}
		}
		return t, nil
	}
	return Type{}, firstErr
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
