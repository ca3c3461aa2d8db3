package filter

import (
	"fmt"
	"strconv"
	"strings"
)

// SyntaxError is an expression that does not parse, or that names an
// unknown field or compares values of different types. Pos is the byte
// offset in Expr where the problem starts.
type SyntaxError struct {
	Expr string
	Pos  int
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("filter %q: column %d: %s", e.Expr, e.Pos+1, e.Msg)
}

// Op is a comparison operator.
type Op uint8

// The comparison operators, with their tshark spellings: == eq, != ne,
// < lt, <= le, > gt, >= ge, contains.
const (
	OpEq Op = iota + 1
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpContains
)

var opNames = [...]string{OpEq: "==", OpNe: "!=", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=", OpContains: "contains"}

func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "?"
}

// node kinds of the syntax tree.
type nodeKind uint8

const (
	nAnd nodeKind = iota + 1
	nOr
	nNot
	nCmp   // a op b
	nExist // a bare field: true when present
)

type node struct {
	kind nodeKind
	pos  int
	l, r *node   // nAnd, nOr; nNot uses l
	op   Op      // nCmp
	a, b operand // nCmp; nExist uses a
}

type operandKind uint8

const (
	oField operandKind = iota + 1
	oNumber
	oString
)

type operand struct {
	kind operandKind
	pos  int
	name string // oField
	num  Int    // oNumber (char literals too)
	str  string // oString
	// text is how the literal was written (number literals of fields
	// with names are looked up as names when they do not parse).
	text string
}

func (o operand) String() string {
	switch o.kind {
	case oField:
		return o.name
	case oNumber:
		return o.num.String()
	}
	return strconv.Quote(o.str)
}

// Expr is a parsed filter expression. Compile it against a Table to get
// the predicate of one kind of record.
type Expr struct {
	src  string
	root *node
}

// String returns the expression in canonical form: fully parenthesised,
// operators spelled ==, &&, ||, !, numbers in decimal. Parse(e.String())
// gives the same expression.
func (e *Expr) String() string {
	var b strings.Builder
	writeNode(&b, e.root)
	return b.String()
}

func writeNode(b *strings.Builder, n *node) {
	switch n.kind {
	case nAnd, nOr:
		b.WriteByte('(')
		writeNode(b, n.l)
		if n.kind == nAnd {
			b.WriteString(" && ")
		} else {
			b.WriteString(" || ")
		}
		writeNode(b, n.r)
		b.WriteByte(')')
	case nNot:
		b.WriteString("!")
		writeNode(b, n.l)
	case nCmp:
		b.WriteByte('(')
		b.WriteString(n.a.String())
		b.WriteByte(' ')
		b.WriteString(n.op.String())
		b.WriteByte(' ')
		b.WriteString(n.b.String())
		b.WriteByte(')')
	case nExist:
		b.WriteString(n.a.name)
	}
}

// Fields returns the field names the expression uses, in order of
// appearance, each once.
func (e *Expr) Fields() []string {
	var out []string
	seen := map[string]bool{}
	var walk func(n *node)
	add := func(o operand) {
		if o.kind == oField && !seen[o.name] {
			seen[o.name] = true
			out = append(out, o.name)
		}
	}
	walk = func(n *node) {
		if n == nil {
			return
		}
		walk(n.l)
		walk(n.r)
		add(n.a)
		add(n.b)
	}
	walk(e.root)
	return out
}

// maxDepth bounds nesting (parentheses and !) so that a hostile
// expression cannot exhaust the stack.
const maxDepth = 256

// Parse parses a display-filter expression:
//
//	expr    = or
//	or      = and { ("||" | "or") and }
//	and     = not { ("&&" | "and") not }
//	not     = ("!" | "not") not | "(" expr ")" | operand [ cmp operand ]
//	cmp     = "==" | "eq" | "!=" | "ne" | "<" | "lt" | "<=" | "le"
//	        | ">" | "gt" | ">=" | "ge" | "contains"
//	operand = field | number | string | char
//
// Fields are names such as usb.endpoint_address (letters, digits, '_',
// '.' and '-', starting with a letter); numbers are decimal, 0x hex, 0o
// octal or 0b binary, optionally negative; strings are in double quotes
// with Go escapes; 'c' is the number of character c. A bare field is true
// when the record has it.
func Parse(s string) (*Expr, error) {
	p := &parser{src: s}
	p.next()
	if p.err != nil {
		return nil, p.err
	}
	if p.tok.kind == tEOF {
		return nil, p.errAt(0, "empty expression")
	}
	n := p.parseOr(0)
	if p.err != nil {
		return nil, p.err
	}
	if p.tok.kind != tEOF {
		return nil, p.errAt(p.tok.pos, fmt.Sprintf("unexpected %s", p.tok.describe()))
	}
	return &Expr{src: s, root: n}, nil
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tNumber
	tString
	tChar
	tAnd
	tOr
	tNot
	tLParen
	tRParen
	tCmp
)

type token struct {
	kind tokKind
	pos  int
	text string
	op   Op
	num  Int
	str  string
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tString:
		return "string " + strconv.Quote(t.str)
	}
	return strconv.Quote(t.text)
}

type parser struct {
	src string
	off int
	tok token
	err *SyntaxError
}

func (p *parser) errAt(pos int, msg string) *SyntaxError {
	if p.err == nil {
		p.err = &SyntaxError{Expr: p.src, Pos: pos, Msg: msg}
	}
	return p.err
}

var words = map[string]token{
	"and": {kind: tAnd}, "or": {kind: tOr}, "not": {kind: tNot},
	"eq": {kind: tCmp, op: OpEq}, "ne": {kind: tCmp, op: OpNe},
	"lt": {kind: tCmp, op: OpLt}, "le": {kind: tCmp, op: OpLe},
	"gt": {kind: tCmp, op: OpGt}, "ge": {kind: tCmp, op: OpGe},
	"contains": {kind: tCmp, op: OpContains},
}

func isIdentStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isIdentByte(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9' || c == '.' || c == '-'
}

// next reads the next token into p.tok.
func (p *parser) next() {
	s := p.src
	for p.off < len(s) && (s[p.off] == ' ' || s[p.off] == '\t' || s[p.off] == '\n' || s[p.off] == '\r') {
		p.off++
	}
	start := p.off
	if p.off >= len(s) {
		p.tok = token{kind: tEOF, pos: start}
		return
	}
	c := s[p.off]
	two := ""
	if p.off+1 < len(s) {
		two = s[p.off : p.off+2]
	}
	tok := func(k tokKind, n int, op Op) {
		p.off += n
		p.tok = token{kind: k, pos: start, text: s[start:p.off], op: op}
	}
	switch {
	case two == "&&":
		tok(tAnd, 2, 0)
	case two == "||":
		tok(tOr, 2, 0)
	case two == "==":
		tok(tCmp, 2, OpEq)
	case two == "!=":
		tok(tCmp, 2, OpNe)
	case two == "<=":
		tok(tCmp, 2, OpLe)
	case two == ">=":
		tok(tCmp, 2, OpGe)
	case c == '<':
		tok(tCmp, 1, OpLt)
	case c == '>':
		tok(tCmp, 1, OpGt)
	case c == '!':
		tok(tNot, 1, 0)
	case c == '(':
		tok(tLParen, 1, 0)
	case c == ')':
		tok(tRParen, 1, 0)
	case c == '"':
		p.lexString()
	case c == '\'':
		p.lexChar()
	case c >= '0' && c <= '9' || c == '-' && p.off+1 < len(s) && s[p.off+1] >= '0' && s[p.off+1] <= '9':
		p.lexNumber()
	case isIdentStart(c):
		for p.off < len(s) && isIdentByte(s[p.off]) {
			p.off++
		}
		text := s[start:p.off]
		if w, ok := words[text]; ok {
			w.pos, w.text = start, text
			p.tok = w
			return
		}
		if strings.HasSuffix(text, ".") || strings.Contains(text, "..") {
			p.errAt(start, fmt.Sprintf("bad field name %q", text))
			p.tok = token{kind: tEOF, pos: start}
			return
		}
		p.tok = token{kind: tIdent, pos: start, text: text}
	case c == '=':
		p.errAt(start, `"=" is not an operator: use "==" to compare`)
		p.tok = token{kind: tEOF, pos: start}
	case c == '&' || c == '|':
		p.errAt(start, fmt.Sprintf("%q is not an operator: use %q", string(c), string(c)+string(c)))
		p.tok = token{kind: tEOF, pos: start}
	default:
		p.errAt(start, fmt.Sprintf("unexpected character %q", rune(c)))
		p.tok = token{kind: tEOF, pos: start}
	}
}

func (p *parser) lexNumber() {
	s, start := p.src, p.off
	if s[p.off] == '-' {
		p.off++
	}
	for p.off < len(s) && (isIdentByte(s[p.off]) && s[p.off] != '.' && s[p.off] != '-') {
		p.off++
	}
	text := s[start:p.off]
	n, ok := parseInt(text)
	if !ok {
		p.errAt(start, fmt.Sprintf("bad number %q (want decimal, 0x hex, 0o octal or 0b binary, at most 64 bits)", text))
		p.tok = token{kind: tEOF, pos: start}
		return
	}
	p.tok = token{kind: tNumber, pos: start, text: text, num: n}
}

// parseInt parses a decimal, 0x, 0o or 0b integer of at most 64 bits,
// optionally negative.
func parseInt(text string) (Int, bool) {
	neg := strings.HasPrefix(text, "-")
	u, err := strconv.ParseUint(strings.TrimPrefix(text, "-"), 0, 64)
	if err != nil || strings.Contains(text, "_") {
		return Int{}, false
	}
	if !neg {
		return Uint(u), true
	}
	if u > 1<<63 {
		return Int{}, false
	}
	return Signed(-int64(u)), true
}

func (p *parser) lexString() {
	s, start := p.src, p.off
	p.off++
	for p.off < len(s) && s[p.off] != '"' {
		if s[p.off] == '\\' {
			p.off++
		}
		p.off++
	}
	if p.off >= len(s) {
		p.errAt(start, "string not closed")
		p.tok = token{kind: tEOF, pos: start}
		return
	}
	p.off++
	text := s[start:p.off]
	v, err := strconv.Unquote(text)
	if err != nil {
		p.errAt(start, fmt.Sprintf("bad string %s: %v", text, err))
		p.tok = token{kind: tEOF, pos: start}
		return
	}
	p.tok = token{kind: tString, pos: start, text: text, str: v}
}

func (p *parser) lexChar() {
	s, start := p.src, p.off
	end := strings.IndexByte(s[start+1:], '\'')
	if end < 0 {
		p.errAt(start, "character not closed")
		p.tok = token{kind: tEOF, pos: start}
		return
	}
	text := s[start : start+end+2]
	p.off = start + end + 2
	v, mb, tail, err := strconv.UnquoteChar(text[1:len(text)-1], '\'')
	if err != nil || tail != "" || mb || v > 0xff {
		p.errAt(start, fmt.Sprintf("bad character %s: want one byte, e.g. 'S'", text))
		p.tok = token{kind: tEOF, pos: start}
		return
	}
	p.tok = token{kind: tChar, pos: start, text: text, num: Uint(uint64(v))}
}

func (p *parser) parseOr(depth int) *node {
	l := p.parseAnd(depth)
	for p.err == nil && p.tok.kind == tOr {
		pos := p.tok.pos
		p.next()
		r := p.parseAnd(depth)
		l = &node{kind: nOr, pos: pos, l: l, r: r}
	}
	return l
}

func (p *parser) parseAnd(depth int) *node {
	l := p.parseNot(depth)
	for p.err == nil && p.tok.kind == tAnd {
		pos := p.tok.pos
		p.next()
		r := p.parseNot(depth)
		l = &node{kind: nAnd, pos: pos, l: l, r: r}
	}
	return l
}

func (p *parser) parseNot(depth int) *node {
	if p.err != nil {
		return nil
	}
	if depth > maxDepth {
		p.errAt(p.tok.pos, fmt.Sprintf("nested more than %d deep", maxDepth))
		return nil
	}
	switch p.tok.kind {
	case tNot:
		pos := p.tok.pos
		p.next()
		return &node{kind: nNot, pos: pos, l: p.parseNot(depth + 1)}
	case tLParen:
		pos := p.tok.pos
		p.next()
		n := p.parseOr(depth + 1)
		if p.err != nil {
			return nil
		}
		if p.tok.kind != tRParen {
			p.errAt(p.tok.pos, fmt.Sprintf("want \")\" to close the \"(\" at column %d, found %s", pos+1, p.tok.describe()))
			return nil
		}
		p.next()
		return n
	}
	a, ok := p.parseOperand()
	if !ok {
		return nil
	}
	if p.tok.kind != tCmp {
		if a.kind != oField {
			p.errAt(a.pos, fmt.Sprintf("%s alone is not a test: compare it with a field", a.text))
			return nil
		}
		return &node{kind: nExist, pos: a.pos, a: a}
	}
	op, pos := p.tok.op, p.tok.pos
	p.next()
	b, ok := p.parseOperand()
	if !ok {
		return nil
	}
	return &node{kind: nCmp, pos: pos, op: op, a: a, b: b}
}

func (p *parser) parseOperand() (operand, bool) {
	if p.err != nil {
		return operand{}, false
	}
	t := p.tok
	var o operand
	switch t.kind {
	case tIdent:
		o = operand{kind: oField, pos: t.pos, name: t.text, text: t.text}
	case tNumber, tChar:
		o = operand{kind: oNumber, pos: t.pos, num: t.num, text: t.text}
	case tString:
		o = operand{kind: oString, pos: t.pos, str: t.str, text: t.text}
	default:
		p.errAt(t.pos, fmt.Sprintf("want a field, number or string, found %s", t.describe()))
		return operand{}, false
	}
	p.next()
	return o, p.err == nil
}
