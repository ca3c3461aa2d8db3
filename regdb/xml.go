package regdb

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
)

// xelem is one parsed XML element with the line it starts on.
type xelem struct {
	name  string
	attrs []xml.Attr
	kids  []*xelem
	text  []byte
	line  int
}

func (e *xelem) attr(name string) (string, bool) {
	for _, a := range e.attrs {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

const maxXMLDepth = 256

// parseXMLTree reads an XML document into a tree of elements, keeping the
// start line of every element.
func parseXMLTree(file string, data []byte) (*xelem, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	line, lineOff := 1, int64(0)
	lineAt := func(off int64) int {
		if off > int64(len(data)) {
			off = int64(len(data))
		}
		if off > lineOff {
			line += bytes.Count(data[lineOff:off], []byte{'\n'})
			lineOff = off
		}
		return line
	}
	var root *xelem
	var stack []*xelem
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return nil, &SyntaxError{File: file, Line: se.Line, Msg: se.Msg}
			}
			return nil, &SyntaxError{File: file, Line: lineAt(dec.InputOffset()), Msg: err.Error()}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) >= maxXMLDepth {
				return nil, &SyntaxError{File: file, Line: lineAt(start), Msg: "elements nested too deeply"}
			}
			e := &xelem{name: t.Name.Local, attrs: t.Copy().Attr, line: lineAt(start)}
			if len(stack) == 0 {
				if root != nil {
					return nil, &SyntaxError{File: file, Line: e.line, Msg: "more than one root element"}
				}
				root = e
			} else {
				p := stack[len(stack)-1]
				p.kids = append(p.kids, e)
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 && len(stack[len(stack)-1].text) < 4096 {
				top := stack[len(stack)-1]
				top.text = append(top.text, t...)
			}
		}
	}
	if root == nil {
		return nil, &SyntaxError{File: file, Line: lineAt(int64(len(data))), Msg: "no root element"}
	}
	return root, nil
}

// docTags are documentation elements that carry no register facts.
var docTags = map[string]bool{
	"doc": true, "brief": true, "copyright": true, "author": true, "nick": true,
	"license": true, "title": true, "ul": true, "ol": true, "li": true,
	"b": true, "i": true, "u": true, "code": true,
}

type xmlFile struct {
	l    *loader
	file string // shown in errors
	path string // in the loader's file system
}

func (x *xmlFile) pos(e *xelem) Pos { return Pos{File: x.file, Line: e.line} }

func (x *xmlFile) load(data []byte) error {
	root, err := parseXMLTree(x.file, data)
	if err != nil {
		return err
	}
	if root.name != "database" {
		return x.pos(root).errorf("root element is <%s>, want <database>", root.name)
	}
	for _, k := range root.kids {
		handled, err := x.topLevel(k)
		if err != nil {
			return err
		}
		if !handled {
			return x.pos(k).errorf("unexpected <%s> in <database>", k.name)
		}
	}
	return nil
}

// topLevel handles the elements allowed anywhere: domain, group, bitset,
// enum, import and documentation.
func (x *xmlFile) topLevel(e *xelem) (bool, error) {
	switch {
	case docTags[e.name]:
		return true, nil
	case e.name == "import":
		f, ok := e.attr("file")
		if !ok || f == "" {
			return true, x.pos(e).errorf("<import> without file")
		}
		return true, x.l.importFile(x.path, f, x.pos(e))
	case e.name == "domain":
		return true, x.domain(e)
	case e.name == "group":
		return true, x.group(e)
	case e.name == "bitset":
		_, err := x.bitset(e)
		return true, err
	case e.name == "enum":
		_, err := x.enum(e)
		return true, err
	case e.name == "spectype":
		return true, x.spectype(e)
	}
	return false, nil
}

// spectype is a named type: with inline bitfields a bitset, with values
// an enum, else an alias of its type attribute.
func (x *xmlFile) spectype(e *xelem) error {
	name, err := x.required(e, "name")
	if err != nil {
		return err
	}
	var fields []*Bitfield
	var values []*Value
	for _, k := range e.kids {
		switch k.name {
		case "bitfield":
			f, err := x.bitfield(k)
			if err != nil {
				return err
			}
			fields = append(fields, f)
		case "value":
			v, err := x.value(k)
			if err != nil {
				return err
			}
			values = append(values, v)
		default:
			if handled, err := x.topLevel(k); err != nil || !handled {
				if err == nil {
					err = x.pos(k).errorf("unexpected <%s> in <spectype>", k.name)
				}
				return err
			}
		}
	}
	switch {
	case len(fields) > 0:
		bs := x.l.bitset(name, x.pos(e))
		bs.Fields = append(bs.Fields, fields...)
	case len(values) > 0:
		en := x.l.enum(name, x.pos(e))
		en.Values = append(en.Values, values...)
	default:
		t, _ := e.attr("type")
		if t == "" {
			t = "hex"
		}
		x.l.db.specTypes[name] = t
	}
	return nil
}

func (x *xmlFile) required(e *xelem, name string) (string, error) {
	v, ok := e.attr(name)
	if !ok || v == "" {
		return "", x.pos(e).errorf("<%s> without %s", e.name, name)
	}
	return v, nil
}

func (x *xmlFile) num(e *xelem, name string, def uint64) (uint64, error) {
	v, ok := e.attr(name)
	if !ok {
		return def, nil
	}
	n, err := parseNum(v)
	if err != nil {
		return 0, x.pos(e).errorf("<%s %s=%q>: not a number", e.name, name, v)
	}
	return n, nil
}

func (x *xmlFile) bit(e *xelem, name string) (uint, bool, error) {
	v, ok := e.attr(name)
	if !ok {
		return 0, false, nil
	}
	n, err := parseNum(v)
	if err != nil || n > 63 {
		return 0, false, x.pos(e).errorf("<%s %s=%q>: want a bit number 0..63", e.name, name, v)
	}
	return uint(n), true, nil
}

func parseNum(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-") {
		n, err := strconv.ParseInt(s, 0, 64)
		return uint64(n), err
	}
	return strconv.ParseUint(s, 0, 64)
}

func variantsOf(e *xelem) Variants {
	vs, _ := e.attr("varset")
	spec, _ := e.attr("variants")
	return Variants{Varset: vs, Spec: spec}
}

func (x *xmlFile) domain(e *xelem) error {
	name, err := x.required(e, "name")
	if err != nil {
		return err
	}
	size, err := x.num(e, "size", 0)
	if err != nil {
		return err
	}
	width, err := x.num(e, "width", 8)
	if err != nil {
		return err
	}
	switch width {
	case 8, 16, 32, 64:
	default:
		return x.pos(e).errorf("<domain %s>: width %d: want 8, 16, 32 or 64", name, width)
	}
	bare, _ := e.attr("bare")
	d, err := x.l.domain(name, size, uint(width), x.pos(e))
	if err != nil {
		return err
	}
	d.Bare = d.Bare || bare == "yes" || bare == "true"
	if p, ok := e.attr("prefix"); ok {
		d.Prefix = p
	}
	if vs := variantsOf(e); vs.Spec != "" || vs.Varset != "" {
		d.Variants = vs
	}
	items, err := x.items(e)
	if err != nil {
		return err
	}
	d.Items = append(d.Items, items...)
	return nil
}

func (x *xmlFile) group(e *xelem) error {
	name, err := x.required(e, "name")
	if err != nil {
		return err
	}
	items, err := x.items(e)
	if err != nil {
		return err
	}
	g, ok := x.l.db.Groups[name]
	if !ok {
		g = &Group{Name: name, Pos: x.pos(e)}
		x.l.db.Groups[name] = g
	}
	g.Items = append(g.Items, items...)
	return nil
}

// items reads the register-level children of a domain, group, array or stripe.
func (x *xmlFile) items(e *xelem) ([]Node, error) {
	var out []Node
	for _, k := range e.kids {
		switch k.name {
		case "reg8", "reg16", "reg32", "reg64":
			r, err := x.register(k)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		case "array", "stripe":
			a, err := x.array(k)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		case "use-group":
			name, err := x.required(k, "name")
			if err != nil {
				return nil, err
			}
			out = append(out, &UseGroup{Name: name, Pos: x.pos(k)})
		default:
			handled, err := x.topLevel(k)
			if err != nil {
				return nil, err
			}
			if !handled {
				return nil, x.pos(k).errorf("unexpected <%s> in <%s>", k.name, e.name)
			}
		}
	}
	return out, nil
}

func (x *xmlFile) array(e *xelem) (*Array, error) {
	a := &Array{Stripe: e.name == "stripe", Variants: variantsOf(e), Pos: x.pos(e)}
	a.Name, _ = e.attr("name")
	a.Prefix, _ = e.attr("prefix")
	var err error
	if !a.Stripe {
		// rnn itself only insists on the stride; real files have nameless arrays
		if _, err := x.required(e, "stride"); err != nil {
			return nil, err
		}
	}
	if a.Offset, err = x.num(e, "offset", 0); err != nil {
		return nil, err
	}
	if a.Stride, err = x.num(e, "stride", 0); err != nil {
		return nil, err
	}
	if a.Length, err = x.num(e, "length", 1); err != nil {
		return nil, err
	}
	if a.Items, err = x.items(e); err != nil {
		return nil, err
	}
	return a, nil
}

func (x *xmlFile) register(e *xelem) (*Register, error) {
	name, err := x.required(e, "name")
	if err != nil {
		return nil, err
	}
	if _, err := x.required(e, "offset"); err != nil {
		return nil, err
	}
	w, _ := strconv.Atoi(strings.TrimPrefix(e.name, "reg"))
	r := &Register{Name: name, Width: uint(w), Variants: variantsOf(e), Pos: x.pos(e)}
	if r.Offset, err = x.num(e, "offset", 0); err != nil {
		return nil, err
	}
	if r.Length, err = x.num(e, "length", 1); err != nil {
		return nil, err
	}
	if r.Stride, err = x.num(e, "stride", 0); err != nil {
		return nil, err
	}
	shr, _, err := x.bit(e, "shr")
	if err != nil {
		return nil, err
	}
	r.Shr = shr
	acc, _ := e.attr("access")
	var ok bool
	if r.Access, ok = parseAccess(acc); !ok {
		return nil, x.pos(e).errorf("<%s %s>: access %q: want r, w or rw", e.name, name, acc)
	}
	r.typeRef, _ = e.attr("type")
	for _, k := range e.kids {
		switch k.name {
		case "bitfield":
			f, err := x.bitfield(k)
			if err != nil {
				return nil, err
			}
			r.fields = append(r.fields, f)
		case "value":
			v, err := x.value(k)
			if err != nil {
				return nil, err
			}
			r.values = append(r.values, v)
		case "brief":
			r.Doc = strings.TrimSpace(string(k.text))
		default:
			handled, err := x.topLevel(k)
			if err != nil {
				return nil, err
			}
			if !handled {
				return nil, x.pos(k).errorf("unexpected <%s> in <%s>", k.name, e.name)
			}
		}
	}
	return r, nil
}

func (x *xmlFile) bitfield(e *xelem) (*Bitfield, error) {
	name, err := x.required(e, "name")
	if err != nil {
		return nil, err
	}
	f := &Bitfield{Name: name, Variants: variantsOf(e), Pos: x.pos(e)}
	low, hasLow, err := x.bit(e, "low")
	if err != nil {
		return nil, err
	}
	high, hasHigh, err := x.bit(e, "high")
	if err != nil {
		return nil, err
	}
	pos, hasPos, err := x.bit(e, "pos")
	if err != nil {
		return nil, err
	}
	switch {
	case hasPos:
		f.Low, f.High = pos, pos
	case hasLow && hasHigh:
		f.Low, f.High = low, high
	case hasLow:
		f.Low, f.High = low, low
	default:
		return nil, x.pos(e).errorf("<bitfield %s> needs low and high, or pos", name)
	}
	if f.Low > f.High {
		return nil, x.pos(e).errorf("<bitfield %s>: low %d > high %d", name, f.Low, f.High)
	}
	if f.Shr, _, err = x.bit(e, "shr"); err != nil {
		return nil, err
	}
	f.typeRef, _ = e.attr("type")
	for _, k := range e.kids {
		switch k.name {
		case "value":
			v, err := x.value(k)
			if err != nil {
				return nil, err
			}
			f.values = append(f.values, v)
		case "bitfield":
			sub, err := x.bitfield(k)
			if err != nil {
				return nil, err
			}
			f.fields = append(f.fields, sub)
		default:
			handled, err := x.topLevel(k)
			if err != nil {
				return nil, err
			}
			if !handled {
				return nil, x.pos(k).errorf("unexpected <%s> in <bitfield>", k.name)
			}
		}
	}
	return f, nil
}

func (x *xmlFile) value(e *xelem) (*Value, error) {
	name, err := x.required(e, "name")
	if err != nil {
		return nil, err
	}
	v := &Value{Name: name, Variants: variantsOf(e), Pos: x.pos(e)}
	if s, ok := e.attr("value"); ok {
		n, err := parseNum(s)
		if err != nil {
			return nil, x.pos(e).errorf("<value %s>: value %q is not a number", name, s)
		}
		v.Value, v.HasValue = n, true
	}
	return v, nil
}

func (x *xmlFile) enum(e *xelem) (*Enum, error) {
	name, err := x.required(e, "name")
	if err != nil {
		return nil, err
	}
	en := x.l.enum(name, x.pos(e))
	if vs := variantsOf(e); vs.Spec != "" || vs.Varset != "" {
		en.Variants = vs
	}
	if in, _ := e.attr("inline"); in == "yes" || in == "true" {
		en.Inline = true
	}
	if p, ok := e.attr("prefix"); ok {
		en.Prefix = p
	}
	for _, k := range e.kids {
		switch k.name {
		case "value":
			v, err := x.value(k)
			if err != nil {
				return nil, err
			}
			en.Values = append(en.Values, v)
		default:
			handled, err := x.topLevel(k)
			if err != nil {
				return nil, err
			}
			if !handled {
				return nil, x.pos(k).errorf("unexpected <%s> in <enum>", k.name)
			}
		}
	}
	return en, nil
}

func (x *xmlFile) bitset(e *xelem) (*Bitset, error) {
	name, err := x.required(e, "name")
	if err != nil {
		return nil, err
	}
	bs := x.l.bitset(name, x.pos(e))
	if vs := variantsOf(e); vs.Spec != "" || vs.Varset != "" {
		bs.Variants = vs
	}
	if in, _ := e.attr("inline"); in == "yes" || in == "true" {
		bs.Inline = true
	}
	if p, ok := e.attr("prefix"); ok {
		bs.Prefix = p
	}
	for _, k := range e.kids {
		switch k.name {
		case "bitfield":
			f, err := x.bitfield(k)
			if err != nil {
				return nil, err
			}
			bs.Fields = append(bs.Fields, f)
		default:
			handled, err := x.topLevel(k)
			if err != nil {
				return nil, err
			}
			if !handled {
				return nil, x.pos(k).errorf("unexpected <%s> in <bitset>", k.name)
			}
		}
	}
	return bs, nil
}
