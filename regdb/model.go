package regdb

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every error that reports a bad database file.
var ErrInvalid = errors.New("invalid register database")

// ErrNotFound is wrapped when a named domain, database or variant does not exist.
var ErrNotFound = errors.New("not found")

// SyntaxError reports a problem in a database file with its position.
type SyntaxError struct {
	File string // file name as given to the loader
	Line int    // 1-based line; 0 when unknown
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *SyntaxError) Unwrap() error { return ErrInvalid }

// Pos is where an item was defined.
type Pos struct {
	File string
	Line int
}

func (p Pos) errorf(format string, args ...any) error {
	return &SyntaxError{File: p.File, Line: p.Line, Msg: fmt.Sprintf(format, args...)}
}

// Access is the documented access mode of a register.
type Access uint8

// Access modes.
const (
	ReadWrite Access = iota // "rw", the default
	ReadOnly                // "r"
	WriteOnly               // "w"
)

func (a Access) String() string {
	switch a {
	case ReadOnly:
		return "r"
	case WriteOnly:
		return "w"
	}
	return "rw"
}

func parseAccess(s string) (Access, bool) {
	switch s {
	case "", "rw":
		return ReadWrite, true
	case "r":
		return ReadOnly, true
	case "w":
		return WriteOnly, true
	}
	return 0, false
}

// Variants restricts an item to some variants of a variant set (an Enum),
// with the rnndb syntax kept verbatim: "A", "A-B" (inclusive), "A:B"
// (B excluded), ":B", "-B", "A-", several separated by spaces.
type Variants struct {
	Varset string // the enum the variants come from; "" means inherited or guessed
	Spec   string // "" means all variants
}

// Kind is how a value (register or bitfield) is interpreted.
type Kind uint8

// Kinds of values.
const (
	KindHex     Kind = iota // unsigned, shown in hexadecimal (default)
	KindUint                // unsigned decimal
	KindInt                 // signed decimal
	KindBool                // a flag: shown by name when set
	KindFloat               // IEEE 754 of the field's width (32 or 64 bits)
	KindEnum                // a value from Type.Enum
	KindBitset              // decoded further with Type.Bitset
	KindAddress             // an offset in another domain (Type.Ref), shown in hex
)

// Type is the interpretation of a register or bitfield.
type Type struct {
	Kind   Kind
	Ref    string  // the type attribute as written ("" for the default)
	Enum   *Enum   // for KindEnum
	Bitset *Bitset // for KindBitset
}

// Enum is a named set of values. Variant sets are enums too.
type Enum struct {
	Name     string // "" for inline enums
	Inline   bool
	Prefix   string // rnndb prefix: the enum whose variants items are named by (not applied to names)
	Variants Variants
	Values   []*Value
	Pos      Pos
}

// Value is one value of an Enum.
type Value struct {
	Name     string
	Value    uint64
	HasValue bool // false for variant-set members written without value=
	Variants Variants
	Pos      Pos
}

// Bitset is a named list of bitfields.
type Bitset struct {
	Name     string // "" for inline bitsets
	Inline   bool
	Prefix   string
	Variants Variants
	Fields   []*Bitfield
	Pos      Pos
}

// Bitfield is bits Low..High (inclusive, LSB = 0) of a value.
type Bitfield struct {
	Name      string
	Low, High uint
	Shr       uint // the field's value is the real value shifted right by Shr
	Type      Type
	Variants  Variants
	Pos       Pos

	typeRef string
	values  []*Value    // inline values, turned into Type.Enum when resolved
	fields  []*Bitfield // inline bitfields (bits relative to this field)
}

// Mask is the field's mask in the register.
func (f *Bitfield) Mask() uint64 {
	return fieldMask(f.High-f.Low+1) << f.Low
}

func fieldMask(n uint) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// Node is an item of a domain, group, array or stripe: *Register, *Array or
// *UseGroup.
type Node interface{ node() }

// Register is a reg8/16/32/64.
type Register struct {
	Name     string
	Offset   uint64 // in domain units, relative to the enclosing array/stripe
	Width    uint   // bits: 8, 16, 32 or 64
	Access   Access
	Length   uint64 // >1: the register repeats Length times...
	Stride   uint64 // ...Stride units apart
	Shr      uint
	Type     Type
	Variants Variants
	Doc      string // <brief> or the native form's doc:
	Pos      Pos

	typeRef string
	fields  []*Bitfield
	values  []*Value
}

// Array is an rnndb <array> (Stripe false) or <stripe> (Stripe true): Items
// repeated Length times, Stride units apart, starting at Offset.
type Array struct {
	Name     string // may be "" for stripes: no name part
	Offset   uint64
	Stride   uint64
	Length   uint64
	Stripe   bool
	Prefix   string
	Variants Variants
	Items    []Node
	Pos      Pos
}

// UseGroup includes the items of a named group in place.
type UseGroup struct {
	Name string
	Pos  Pos
}

func (*Register) node() {}
func (*Array) node()    {}
func (*UseGroup) node() {}

// Domain is one address space, such as a PCI BAR.
type Domain struct {
	Name     string
	Size     uint64 // in units; 0 when unknown
	Width    uint   // bits per addressable unit (8 by default)
	Bare     bool
	Prefix   string
	Variants Variants
	Items    []Node
	PCI      []PCIID // devices whose BAR this domain describes (native form)
	BAR      int     // which BAR (native form, default 0)
	Pos      Pos

	index *index
}

// PCIID is a PCI vendor and device id.
type PCIID struct{ Vendor, Device uint16 }

func (id PCIID) String() string { return fmt.Sprintf("%04x:%04x", id.Vendor, id.Device) }

// Group is a reusable set of items (<group>).
type Group struct {
	Name  string
	Items []Node
	Pos   Pos
}

// DB is a loaded register database. It is immutable once loaded and safe
// for concurrent use.
type DB struct {
	Domains []*Domain
	Enums   map[string]*Enum
	Bitsets map[string]*Bitset
	Groups  map[string]*Group

	domains   map[string]*Domain
	enumList  []*Enum           // in definition order, to guess variant sets
	specTypes map[string]string // rnndb <spectype name type>: a named alias of a type
	selected  map[string]string
}

// Domain returns the named domain.
func (db *DB) Domain(name string) (*Domain, bool) {
	d, ok := db.domains[name]
	return d, ok
}

// Selected returns the active variant selection (varset → variant).
func (db *DB) Selected() map[string]string {
	out := make(map[string]string, len(db.selected))
	for k, v := range db.selected {
		out[k] = v
	}
	return out
}

// ForPCI returns the domain of db that describes a BAR of the given device.
func (db *DB) ForPCI(id PCIID, bar int) (*Domain, bool) {
	for _, d := range db.Domains {
		if d.BAR != bar {
			continue
		}
		for _, p := range d.PCI {
			if p == id {
				return d, true
			}
		}
	}
	return nil, false
}

func newDB() *DB {
	return &DB{
		Enums:     map[string]*Enum{},
		Bitsets:   map[string]*Bitset{},
		Groups:    map[string]*Group{},
		domains:   map[string]*Domain{},
		specTypes: map[string]string{},
	}
}
