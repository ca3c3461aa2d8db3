package filter

import (
	"fmt"
	"sort"
	"strings"
)

// Field is one field a filter can name, read from a record of type T.
// Exactly one of Num and Str is set. The getter's bool is false when the
// record does not have the field (e.g. the setup fields of a bulk
// transfer): any comparison with an absent field is false, "a != b" too,
// as in tshark; "!(a == b)" is true then.
type Field[T any] struct {
	Name string
	Doc  string
	Num  func(*T) (Int, bool)
	Str  func(*T) (string, bool)
	// Names, for a number field, turns a name written as a string
	// literal into the number it stands for (usb.transfer_type == "bulk").
	Names func(string) (Int, bool)
	// NameList lists the names Names accepts, for help and errors.
	NameList []string
}

// Table is the set of fields of one kind of record.
type Table[T any] struct {
	byName  map[string]*Field[T]
	order   []*Field[T]
	aliases map[string]string
	// Dynamic, if set, resolves names not in the table (the fields of a
	// user_events format, known only per record). It returns false for
	// names it does not take: they are then unknown fields. A dynamic
	// field may set both Num and Str (its type is known only per record):
	// a comparison then uses the getter of the other operand's type
	// (Num against another such field), and a bare name tests either.
	Dynamic func(name string) (Field[T], bool)
}

// NewTable returns a table of the fields.
func NewTable[T any](fields ...Field[T]) *Table[T] {
	t := &Table[T]{byName: map[string]*Field[T]{}, aliases: map[string]string{}}
	for _, f := range fields {
		t.Add(f)
	}
	return t
}

// Add adds a field to the table (a package extending another's table:
// regdb adds the register names to mmiotrace's fields).
func (t *Table[T]) Add(f Field[T]) {
	if (f.Num == nil) == (f.Str == nil) {
		panic("filter: field " + f.Name + " must have exactly one of Num and Str")
	}
	if _, dup := t.byName[f.Name]; dup {
		panic("filter: field " + f.Name + " defined twice")
	}
	t.byName[f.Name] = &f
	t.order = append(t.order, &f)
}

// Alias makes alias another name of the field name.
func (t *Table[T]) Alias(alias, name string) {
	if t.byName[name] == nil {
		panic("filter: alias " + alias + " of unknown field " + name)
	}
	t.aliases[alias] = name
}

// FieldInfo describes a field for help and documentation.
type FieldInfo struct {
	Name    string
	Type    string // "number" or "string"
	Aliases []string
	Doc     string
	Names   []string // names a number field accepts as strings
}

// Fields lists the fields in the order they were defined.
func (t *Table[T]) Fields() []FieldInfo {
	al := map[string][]string{}
	for a, n := range t.aliases {
		al[n] = append(al[n], a)
	}
	out := make([]FieldInfo, 0, len(t.order))
	for _, f := range t.order {
		typ := "number"
		if f.Str != nil {
			typ = "string"
		}
		sort.Strings(al[f.Name])
		out = append(out, FieldInfo{Name: f.Name, Type: typ, Aliases: al[f.Name], Doc: f.Doc, Names: f.NameList})
	}
	return out
}

func (t *Table[T]) lookup(name string) (*Field[T], bool) {
	if a, ok := t.aliases[name]; ok {
		name = a
	}
	if f, ok := t.byName[name]; ok {
		return f, true
	}
	if t.Dynamic != nil {
		if f, ok := t.Dynamic(name); ok && (f.Num != nil || f.Str != nil) {
			return &f, true
		}
	}
	return nil, false
}

// Compile checks e against the fields of t and returns its predicate.
// Unknown fields and comparisons of a number with a string are
// *SyntaxError values with the position of the offending operand.
func Compile[T any](e *Expr, t *Table[T]) (func(*T) bool, error) {
	c := compiler[T]{t: t, e: e}
	p := c.node(e.root)
	if c.err != nil {
		return nil, c.err
	}
	return p, nil
}

// ParseCompile is Parse followed by Compile.
func ParseCompile[T any](s string, t *Table[T]) (func(*T) bool, error) {
	e, err := Parse(s)
	if err != nil {
		return nil, err
	}
	return Compile(e, t)
}

type compiler[T any] struct {
	t   *Table[T]
	e   *Expr
	err *SyntaxError
}

func (c *compiler[T]) fail(pos int, format string, args ...any) {
	if c.err == nil {
		c.err = &SyntaxError{Expr: c.e.src, Pos: pos, Msg: fmt.Sprintf(format, args...)}
	}
}

func (c *compiler[T]) node(n *node) func(*T) bool {
	switch n.kind {
	case nAnd:
		l, r := c.node(n.l), c.node(n.r)
		return func(x *T) bool { return l(x) && r(x) }
	case nOr:
		l, r := c.node(n.l), c.node(n.r)
		return func(x *T) bool { return l(x) || r(x) }
	case nNot:
		l := c.node(n.l)
		return func(x *T) bool { return !l(x) }
	case nExist:
		f := c.field(n.a)
		if f == nil {
			return never[T]
		}
		if f.Num != nil && f.Str != nil {
			n, s := f.Num, f.Str
			return func(x *T) bool {
				if _, ok := n(x); ok {
					return true
				}
				_, ok := s(x)
				return ok
			}
		}
		if f.Num != nil {
			get := f.Num
			return func(x *T) bool { _, ok := get(x); return ok }
		}
		get := f.Str
		return func(x *T) bool { _, ok := get(x); return ok }
	case nCmp:
		return c.cmp(n)
	}
	panic("filter: bad node")
}

func never[T any](*T) bool { return false }

func (c *compiler[T]) field(o operand) *Field[T] {
	f, ok := c.t.lookup(o.name)
	if !ok {
		c.fail(o.pos, "unknown field %q%s", o.name, c.suggest(o.name))
		return nil
	}
	return f
}

// suggest names known fields sharing the prefix of name before its last
// dot, to help with a typo.
func (c *compiler[T]) suggest(name string) string {
	prefix := name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		prefix = name[:i+1]
	}
	var near []string
	for _, f := range c.t.order {
		if strings.HasPrefix(f.Name, prefix) {
			near = append(near, f.Name)
		}
	}
	if len(near) == 0 || len(near) > 12 {
		return ""
	}
	return " (known: " + strings.Join(near, ", ") + ")"
}

// getters of the two operand types; constants are getters too.
type numGet[T any] func(*T) (Int, bool)
type strGet[T any] func(*T) (string, bool)

func (c *compiler[T]) cmp(n *node) func(*T) bool {
	a, b := n.a, n.b // copies: resolving names must not change the tree
	var fa, fb *Field[T]
	if a.kind == oField {
		fa = c.field(a)
	}
	if b.kind == oField {
		fb = c.field(b)
	}
	if c.err != nil {
		return never[T]
	}
	isStr := func(o operand, f *Field[T]) bool {
		if f != nil {
			return f.Str != nil
		}
		return o.kind == oString
	}
	sa, sb := isStr(a, fa), isStr(b, fb)
	dual := func(f *Field[T]) bool { return f != nil && f.Num != nil && f.Str != nil }
	switch {
	case dual(fa) && dual(fb):
		sa, sb = false, false
	case dual(fa):
		sa = sb
	case dual(fb):
		sb = sa
	}
	// A string literal against a number field with names is that name's number.
	if !sa && sb && fb == nil {
		if v, ok := c.name(fa, b); ok {
			b = operand{kind: oNumber, pos: b.pos, num: v, text: b.text}
			sb = false
		} else {
			return never[T]
		}
	}
	if sa && !sb && fa == nil {
		if v, ok := c.name(fb, a); ok {
			a = operand{kind: oNumber, pos: a.pos, num: v, text: a.text}
			sa = false
		} else {
			return never[T]
		}
	}
	if sa != sb {
		what := func(s bool) string {
			if s {
				return "a string"
			}
			return "a number"
		}
		c.fail(b.pos, "%s is %s but %s is %s", a.text, what(sa), b.text, what(sb))
		return never[T]
	}
	if n.op == OpContains && !sa {
		c.fail(n.pos, "contains compares strings; %s is a number", a.text)
		return never[T]
	}
	if sa {
		return strCmp(n.op, strGetter(a, fa), strGetter(b, fb))
	}
	return numCmp(n.op, numGetter(a, fa), numGetter(b, fb))
}

// name resolves the string literal o as a name of the number field f.
func (c *compiler[T]) name(f *Field[T], o operand) (Int, bool) {
	if f == nil || f.Names == nil {
		name := "it"
		if f != nil {
			name = f.Name
		}
		c.fail(o.pos, "%s is a string but %s is a number", o.text, name)
		return Int{}, false
	}
	v, ok := f.Names(o.str)
	if !ok {
		list := ""
		if len(f.NameList) > 0 {
			list = " (want " + strings.Join(f.NameList, ", ") + ", or a number)"
		}
		c.fail(o.pos, "%s is not a value of %s%s", o.text, f.Name, list)
	}
	return v, ok
}

func numGetter[T any](o operand, f *Field[T]) numGet[T] {
	if f != nil {
		return f.Num
	}
	v := o.num
	return func(*T) (Int, bool) { return v, true }
}

func strGetter[T any](o operand, f *Field[T]) strGet[T] {
	if f != nil {
		return f.Str
	}
	v := o.str
	return func(*T) (string, bool) { return v, true }
}

func test(op Op, c int) bool {
	switch op {
	case OpEq:
		return c == 0
	case OpLt:
		return c < 0
	case OpLe:
		return c <= 0
	case OpGt:
		return c > 0
	case OpGe:
		return c >= 0
	}
	return false
}

func numCmp[T any](op Op, a, b numGet[T]) func(*T) bool {
	return func(x *T) bool {
		va, ok := a(x)
		if !ok {
			return false
		}
		vb, ok := b(x)
		if !ok {
			return false
		}
		if op == OpNe {
			return va.Cmp(vb) != 0
		}
		return test(op, va.Cmp(vb))
	}
}

func strCmp[T any](op Op, a, b strGet[T]) func(*T) bool {
	return func(x *T) bool {
		va, ok := a(x)
		if !ok {
			return false
		}
		vb, ok := b(x)
		if !ok {
			return false
		}
		switch op {
		case OpContains:
			return strings.Contains(va, vb)
		case OpNe:
			return va != vb
		}
		return test(op, strings.Compare(va, vb))
	}
}
