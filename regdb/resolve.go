package regdb

import (
	"slices"
	"strings"
)

// resolve turns type references into types, validates variants and widths,
// and builds the lookup indexes. It runs once after all files are read.
// scope is what items inherit for their variants (rnn's prepvarinfo): the
// prefix enum, and the varset of the nearest ancestor that named one.
type scope struct{ prefix, varset string }

// enter returns the variant set an item's variants refer to (its varset,
// else the active prefix enum, else the inherited varset) and the scope
// of its children.
func (db *DB) enter(s scope, own Variants, prefix string) (string, scope) {
	switch {
	case prefix == "none":
		s.prefix = ""
	case prefix != "":
		if _, ok := db.Enums[prefix]; ok {
			s.prefix = prefix
		}
	}
	eff := own.Varset
	if eff == "" {
		eff = s.prefix
	}
	if eff == "" {
		eff = s.varset
	}
	if own.Varset != "" {
		s.varset = own.Varset
	}
	return eff, s
}

// resolve turns type references into types, validates variants and widths,
// and builds the lookup indexes. It runs once after all files are read.
func (db *DB) resolve() error {
	for _, e := range db.enumList {
		eff, sc := db.enter(scope{}, e.Variants, e.Prefix)
		if err := db.checkVariants(&e.Variants, eff, e.Pos); err != nil {
			return err
		}
		for _, v := range e.Values {
			veff, _ := db.enter(sc, v.Variants, "")
			if err := db.checkVariants(&v.Variants, veff, v.Pos); err != nil {
				return err
			}
		}
	}
	for _, name := range sortedKeys(db.Bitsets) {
		bs := db.Bitsets[name]
		eff, sc := db.enter(scope{}, bs.Variants, bs.Prefix)
		if err := db.checkVariants(&bs.Variants, eff, bs.Pos); err != nil {
			return err
		}
		if err := db.resolveFields(bs.Fields, sc, 64); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(db.Groups) {
		g := db.Groups[name]
		if err := db.resolveItems(g.Items, nil, scope{}, 0); err != nil {
			return err
		}
	}
	for _, d := range db.Domains {
		eff, sc := db.enter(scope{}, d.Variants, d.Prefix)
		if err := db.checkVariants(&d.Variants, eff, d.Pos); err != nil {
			return err
		}
		if err := db.resolveItems(d.Items, d, sc, 0); err != nil {
			return err
		}
	}
	return db.buildIndexes()
}

func (db *DB) resolveItems(items []Node, d *Domain, sc scope, depth int) error {
	if depth > maxNesting {
		return &SyntaxError{File: "", Msg: "nesting too deep"}
	}
	for _, it := range items {
		switch n := it.(type) {
		case *Register:
			eff, child := db.enter(sc, n.Variants, "")
			if err := db.checkVariants(&n.Variants, eff, n.Pos); err != nil {
				return err
			}
			if d != nil && d.Width > n.Width {
				return n.Pos.errorf("register %s: %d bits is narrower than the %d-bit units of domain %s", n.Name, n.Width, d.Width, d.Name)
			}
			if n.Type.Bitset != nil || n.Type.Enum != nil {
				continue // already resolved (register shared through a group)
			}
			if err := db.resolveFields(n.fields, child, n.Width); err != nil {
				return err
			}
			if err := db.checkValues(n.values, child); err != nil {
				return err
			}
			t, err := db.resolveType(n.typeRef, n.fields, n.values, n.Width, n.Pos)
			if err != nil {
				return err
			}
			n.Type = t
		case *Array:
			eff, child := db.enter(sc, n.Variants, n.Prefix)
			if err := db.checkVariants(&n.Variants, eff, n.Pos); err != nil {
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
			if err := db.resolveItems(n.Items, d, child, depth+1); err != nil {
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

func (db *DB) resolveFields(fs []*Bitfield, sc scope, width uint) error {
	for _, f := range fs {
		eff, child := db.enter(sc, f.Variants, "")
		if err := db.checkVariants(&f.Variants, eff, f.Pos); err != nil {
			return err
		}
		if f.Low > f.High || f.High >= width {
			return f.Pos.errorf("bitfield %s: bits %d..%d do not fit %d bits", f.Name, f.Low, f.High, width)
		}
		if f.Type.Bitset != nil || f.Type.Enum != nil {
			continue
		}
		if err := db.checkValues(f.values, child); err != nil {
			return err
		}
		if err := db.resolveFields(f.fields, child, f.High-f.Low+1); err != nil {
			return err
		}
		t, err := db.resolveType(f.typeRef, f.fields, f.values, f.High-f.Low+1, f.Pos)
		if err != nil {
			return err
		}
		f.Type = t
	}
	return nil
}

func (db *DB) checkValues(vals []*Value, sc scope) error {
	for _, v := range vals {
		eff, _ := db.enter(sc, v.Variants, "")
		if err := db.checkVariants(&v.Variants, eff, v.Pos); err != nil {
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
		for i := 0; i < 8; i++ {
			alias, ok := db.specTypes[tok]
			if !ok {
				break
			}
			tok = firstField(alias)
		}
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

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return "hex"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
