package regdb

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxYAMLNodes caps the nodes visited (aliases included) in a native file.
const maxYAMLNodes = 1 << 20

type yamlFile struct {
	l     *loader
	file  string
	nodes int
}

func (l *loader) loadYAML(name string, data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line := yamlErrLine(err.Error())
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = strings.TrimPrefix(msg, "line "+strconv.Itoa(line)+": ")
		return &SyntaxError{File: name, Line: line, Msg: msg}
	}
	y := &yamlFile{l: l, file: name}
	if doc.Kind == 0 {
		return &SyntaxError{File: name, Line: 1, Msg: "empty database"}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return &SyntaxError{File: name, Line: 1, Msg: "empty database"}
		}
		root = root.Content[0]
	}
	return y.top(root)
}

// yamlErrLine extracts N from yaml.v3's "yaml: line N: ..." messages.
func yamlErrLine(msg string) int {
	i := strings.Index(msg, "line ")
	if i < 0 {
		return 0
	}
	rest := msg[i+5:]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	n, _ := strconv.Atoi(rest[:j])
	return n
}

func (y *yamlFile) pos(n *yaml.Node) Pos { return Pos{File: y.file, Line: n.Line} }

// deref follows aliases, counting nodes against maxYAMLNodes.
func (y *yamlFile) deref(n *yaml.Node) (*yaml.Node, error) {
	for i := 0; n.Kind == yaml.AliasNode; i++ {
		if n.Alias == nil || i > 64 {
			return nil, y.pos(n).errorf("bad alias")
		}
		n = n.Alias
	}
	y.nodes++
	if y.nodes > maxYAMLNodes {
		return nil, y.pos(n).errorf("more than %d nodes (alias expansion?)", maxYAMLNodes)
	}
	return n, nil
}

type kv struct {
	key string
	k   *yaml.Node
	v   *yaml.Node
}

// mapping returns the pairs of a mapping node, refusing duplicate keys.
func (y *yamlFile) mapping(n *yaml.Node, what string) ([]kv, error) {
	n, err := y.deref(n)
	if err != nil {
		return nil, err
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, y.pos(n).errorf("%s: want a mapping", what)
	}
	out := make([]kv, 0, len(n.Content)/2)
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, err := y.deref(n.Content[i])
		if err != nil {
			return nil, err
		}
		v, err := y.deref(n.Content[i+1])
		if err != nil {
			return nil, err
		}
		if k.Kind != yaml.ScalarNode {
			return nil, y.pos(k).errorf("%s: keys must be scalars", what)
		}
		if line, dup := seen[k.Value]; dup {
			return nil, y.pos(k).errorf("%s: %q defined twice (first on line %d)", what, k.Value, line)
		}
		seen[k.Value] = k.Line
		out = append(out, kv{k.Value, k, v})
	}
	return out, nil
}

func (y *yamlFile) scalar(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", y.pos(n).errorf("%s: want a scalar", what)
	}
	return n.Value, nil
}

func (y *yamlFile) number(n *yaml.Node, what string) (uint64, error) {
	s, err := y.scalar(n, what)
	if err != nil {
		return 0, err
	}
	v, err := parseNum(strings.ReplaceAll(s, "_", ""))
	if err != nil {
		return 0, y.pos(n).errorf("%s: %q is not a number", what, s)
	}
	return v, nil
}

func (y *yamlFile) top(root *yaml.Node) error {
	pairs, err := y.mapping(root, "database")
	if err != nil {
		return err
	}
	// enums and bitsets first so that order in the file does not matter
	for _, p := range pairs {
		switch p.key {
		case "enums":
			if err := y.enums(p.v); err != nil {
				return err
			}
		case "bitsets":
			if err := y.bitsets(p.v); err != nil {
				return err
			}
		case "domains", "name", "doc":
		default:
			return y.pos(p.k).errorf("unknown key %q (want name, doc, enums, bitsets, domains)", p.key)
		}
	}
	for _, p := range pairs {
		if p.key == "domains" {
			if err := y.domains(p.v); err != nil {
				return err
			}
		}
	}
	return nil
}

func (y *yamlFile) enums(n *yaml.Node) error {
	pairs, err := y.mapping(n, "enums")
	if err != nil {
		return err
	}
	for _, p := range pairs {
		e := y.l.enum(p.key, y.pos(p.k))
		if p.v.Kind == yaml.SequenceNode {
			// a variant set: ordered names without values
			for _, it := range p.v.Content {
				it, err := y.deref(it)
				if err != nil {
					return err
				}
				s, err := y.scalar(it, "enum "+p.key)
				if err != nil {
					return err
				}
				e.Values = append(e.Values, &Value{Name: s, Pos: y.pos(it)})
			}
			continue
		}
		vals, err := y.values(p.v, "enum "+p.key)
		if err != nil {
			return err
		}
		e.Values = append(e.Values, vals...)
	}
	return nil
}

// values reads "number: name" pairs.
func (y *yamlFile) values(n *yaml.Node, what string) ([]*Value, error) {
	pairs, err := y.mapping(n, what)
	if err != nil {
		return nil, err
	}
	out := make([]*Value, 0, len(pairs))
	for _, p := range pairs {
		v, err := y.number(p.k, what)
		if err != nil {
			return nil, err
		}
		name, err := y.scalar(p.v, what)
		if err != nil {
			return nil, err
		}
		if name == "" {
			return nil, y.pos(p.v).errorf("%s: empty name for value %d", what, v)
		}
		out = append(out, &Value{Name: name, Value: v, HasValue: true, Pos: y.pos(p.k)})
	}
	return out, nil
}

func (y *yamlFile) bitsets(n *yaml.Node) error {
	pairs, err := y.mapping(n, "bitsets")
	if err != nil {
		return err
	}
	for _, p := range pairs {
		bs := y.l.bitset(p.key, y.pos(p.k))
		fs, err := y.fields(p.v, "bitset "+p.key)
		if err != nil {
			return err
		}
		bs.Fields = append(bs.Fields, fs...)
	}
	return nil
}

func (y *yamlFile) domains(n *yaml.Node) error {
	pairs, err := y.mapping(n, "domains")
	if err != nil {
		return err
	}
	for _, p := range pairs {
		if err := y.domain(p); err != nil {
			return err
		}
	}
	return nil
}

func (y *yamlFile) domain(p kv) error {
	pairs, err := y.mapping(p.v, "domain "+p.key)
	if err != nil {
		return err
	}
	var size, width uint64 = 0, 8
	var regs *yaml.Node
	var pci []PCIID
	bar := 0
	var vs Variants
	for _, q := range pairs {
		what := "domain " + p.key + ": " + q.key
		switch q.key {
		case "size":
			size, err = y.number(q.v, what)
		case "width":
			width, err = y.number(q.v, what)
			if err == nil && width != 8 && width != 16 && width != 32 && width != 64 {
				err = y.pos(q.v).errorf("%s: want 8, 16, 32 or 64", what)
			}
		case "bar":
			var b uint64
			b, err = y.number(q.v, what)
			if err == nil && b > 5 {
				err = y.pos(q.v).errorf("%s: want 0..5", what)
			}
			bar = int(b)
		case "pci":
			pci, err = y.pciList(q.v, what)
		case "varset":
			vs.Varset, err = y.scalar(q.v, what)
		case "variants":
			vs.Spec, err = y.scalar(q.v, what)
		case "registers":
			regs = q.v
		case "doc":
		default:
			err = y.pos(q.k).errorf("domain %s: unknown key %q", p.key, q.key)
		}
		if err != nil {
			return err
		}
	}
	d, err := y.l.domain(p.key, size, uint(width), y.pos(p.k))
	if err != nil {
		return err
	}
	d.PCI = append(d.PCI, pci...)
	d.BAR = bar
	d.Bare = true
	if vs.Spec != "" || vs.Varset != "" {
		d.Variants = vs
	}
	if regs != nil {
		items, err := y.items(regs, "domain "+p.key)
		if err != nil {
			return err
		}
		d.Items = append(d.Items, items...)
	}
	return nil
}

func (y *yamlFile) pciList(n *yaml.Node, what string) ([]PCIID, error) {
	n, err := y.deref(n)
	if err != nil {
		return nil, err
	}
	list := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		list = n.Content
	}
	var out []PCIID
	for _, it := range list {
		it, err := y.deref(it)
		if err != nil {
			return nil, err
		}
		s, err := y.scalar(it, what)
		if err != nil {
			return nil, err
		}
		id, ok := ParsePCIID(s)
		if !ok {
			return nil, y.pos(it).errorf("%s: %q: want VENDOR:DEVICE in hex, as 8086:100e", what, s)
		}
		out = append(out, id)
	}
	return out, nil
}

// ParsePCIID parses "8086:100e".
func ParsePCIID(s string) (PCIID, bool) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return PCIID{}, false
	}
	v, err1 := strconv.ParseUint(a, 16, 16)
	d, err2 := strconv.ParseUint(b, 16, 16)
	if err1 != nil || err2 != nil {
		return PCIID{}, false
	}
	return PCIID{uint16(v), uint16(d)}, true
}

// items reads a "registers:" mapping: registers, arrays and stripes.
func (y *yamlFile) items(n *yaml.Node, what string) ([]Node, error) {
	pairs, err := y.mapping(n, what+": registers")
	if err != nil {
		return nil, err
	}
	var out []Node
	for _, p := range pairs {
		it, err := y.item(p)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, nil
}

func (y *yamlFile) item(p kv) (Node, error) {
	pos := y.pos(p.k)
	if p.v.Kind == yaml.ScalarNode {
		off, err := y.number(p.v, "register "+p.key)
		if err != nil {
			return nil, err
		}
		return &Register{Name: p.key, Offset: off, Width: 32, Length: 1, Pos: pos}, nil
	}
	pairs, err := y.mapping(p.v, "register "+p.key)
	if err != nil {
		return nil, err
	}
	var (
		r       = &Register{Name: p.key, Width: 32, Length: 1, Pos: pos}
		sub     *yaml.Node
		stripe  bool
		hasOff  bool
		length  uint64 = 1
		fieldsN *yaml.Node
		valuesN *yaml.Node
	)
	for _, q := range pairs {
		what := "register " + p.key + ": " + q.key
		switch q.key {
		case "offset":
			r.Offset, err = y.number(q.v, what)
			hasOff = true
		case "width":
			var w uint64
			w, err = y.number(q.v, what)
			if err == nil && w != 8 && w != 16 && w != 32 && w != 64 {
				err = y.pos(q.v).errorf("%s: want 8, 16, 32 or 64", what)
			}
			r.Width = uint(w)
		case "length":
			length, err = y.number(q.v, what)
		case "stride":
			r.Stride, err = y.number(q.v, what)
		case "shr":
			var s uint64
			s, err = y.number(q.v, what)
			if err == nil && s > 63 {
				err = y.pos(q.v).errorf("%s: want 0..63", what)
			}
			r.Shr = uint(s)
		case "access":
			var s string
			if s, err = y.scalar(q.v, what); err == nil {
				var ok bool
				if r.Access, ok = parseAccess(s); !ok {
					err = y.pos(q.v).errorf("%s: %q: want r, w or rw", what, s)
				}
			}
		case "type":
			r.typeRef, err = y.scalar(q.v, what)
		case "doc":
			r.Doc, err = y.scalar(q.v, what)
		case "varset":
			r.Variants.Varset, err = y.scalar(q.v, what)
		case "variants":
			r.Variants.Spec, err = y.scalar(q.v, what)
		case "fields":
			fieldsN = q.v
		case "values":
			valuesN = q.v
		case "registers":
			sub = q.v
		case "stripe":
			var s string
			if s, err = y.scalar(q.v, what); err == nil {
				stripe = s == "true" || s == "yes"
			}
		default:
			err = y.pos(q.k).errorf("register %s: unknown key %q", p.key, q.key)
		}
		if err != nil {
			return nil, err
		}
	}
	if sub != nil {
		if fieldsN != nil || valuesN != nil {
			return nil, pos.errorf("%s: an array (with registers:) cannot have fields or values", p.key)
		}
		if !hasOff && !stripe {
			return nil, pos.errorf("array %s: offset missing", p.key)
		}
		if length > 1 && r.Stride == 0 {
			return nil, pos.errorf("array %s: length %d needs a stride", p.key, length)
		}
		items, err := y.items(sub, "array "+p.key)
		if err != nil {
			return nil, err
		}
		return &Array{Name: p.key, Offset: r.Offset, Stride: r.Stride, Length: length, Stripe: stripe, Variants: r.Variants, Items: items, Pos: pos}, nil
	}
	if !hasOff {
		return nil, pos.errorf("register %s: offset missing", p.key)
	}
	r.Length = length
	if fieldsN != nil {
		if r.fields, err = y.fields(fieldsN, "register "+p.key); err != nil {
			return nil, err
		}
	}
	if valuesN != nil {
		if r.values, err = y.values(valuesN, "register "+p.key+": values"); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// fields reads "NAME: bits" or "NAME: {bits:, type:, values:, shr:}".
func (y *yamlFile) fields(n *yaml.Node, what string) ([]*Bitfield, error) {
	pairs, err := y.mapping(n, what+": fields")
	if err != nil {
		return nil, err
	}
	out := make([]*Bitfield, 0, len(pairs))
	for _, p := range pairs {
		f := &Bitfield{Name: p.key, Pos: y.pos(p.k)}
		fw := what + ": field " + p.key
		if p.v.Kind == yaml.ScalarNode {
			if f.Low, f.High, err = y.bits(p.v, fw); err != nil {
				return nil, err
			}
			out = append(out, f)
			continue
		}
		qs, err := y.mapping(p.v, fw)
		if err != nil {
			return nil, err
		}
		hasBits := false
		for _, q := range qs {
			switch q.key {
			case "bits":
				f.Low, f.High, err = y.bits(q.v, fw)
				hasBits = true
			case "type":
				f.typeRef, err = y.scalar(q.v, fw+": type")
			case "values":
				f.values, err = y.values(q.v, fw+": values")
			case "shr":
				var s uint64
				s, err = y.number(q.v, fw+": shr")
				if err == nil && s > 63 {
					err = y.pos(q.v).errorf("%s: shr: want 0..63", fw)
				}
				f.Shr = uint(s)
			case "varset":
				f.Variants.Varset, err = y.scalar(q.v, fw)
			case "variants":
				f.Variants.Spec, err = y.scalar(q.v, fw)
			case "doc":
			default:
				err = y.pos(q.k).errorf("%s: unknown key %q", fw, q.key)
			}
			if err != nil {
				return nil, err
			}
		}
		if !hasBits {
			return nil, f.Pos.errorf("%s: bits missing", fw)
		}
		out = append(out, f)
	}
	return out, nil
}

// bits parses "5", "9:8", "8:9", "8-9" or "8..9" into low and high.
func (y *yamlFile) bits(n *yaml.Node, what string) (uint, uint, error) {
	s, err := y.scalar(n, what)
	if err != nil {
		return 0, 0, err
	}
	var a, b string
	switch {
	case strings.Contains(s, ".."):
		a, b, _ = strings.Cut(s, "..")
	case strings.Contains(s, ":"):
		a, b, _ = strings.Cut(s, ":")
	case strings.Contains(s, "-"):
		a, b, _ = strings.Cut(s, "-")
	default:
		a, b = s, s
	}
	x, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 8)
	z, err2 := strconv.ParseUint(strings.TrimSpace(b), 10, 8)
	if err1 != nil || err2 != nil || x > 63 || z > 63 {
		return 0, 0, y.pos(n).errorf("%s: bits %q: want N or HIGH:LOW with bits 0..63", what, s)
	}
	if x > z {
		x, z = z, x
	}
	return uint(x), uint(z), nil
}
