// Package regdb is a register database: it names the register at an
// offset of a device's address space and decodes a value into bitfields
// and enums, as in
//
//	CTRL = 0x00140240 {SLU, SPEED=1000, SWDPIN0, SWDPIN2}
//
// A DB holds domains (address spaces, such as a PCI BAR) of registers
// (reg8/16/32/64 at an offset, possibly repeated with length and stride),
// arrays and stripes of registers, bitsets (lists of bitfields), enums
// (named values) and variants (items present only on some chip versions).
// Lookup is a binary search in a table built at load time, and
// Match.AppendFormat does not allocate, so naming millions of accesses is
// cheap. A DB is immutable and safe for concurrent use; WithVariant returns
// a view restricted to some variants.
//
// # Formats
//
// Two formats are read, detected from the content (a file starting with
// '<' is XML):
//
//   - envytools rnndb XML ("rules-ng-ng"): <database>, <import file=>
//     (relative to the importing file, then to the first file; each file is
//     read once), <domain name size width bare>, <reg8/16/32/64 name offset
//     access type shr length stride varset variants>, <array> and <stripe>
//     (name offset stride length), <group> and <use-group>, <bitset> and
//     <bitfield low high | pos, type, shr> (bitfields may nest), <enum> and
//     <value>, <spectype> (a named type), and the varset/variants attributes
//     on any item. As in rnn, an item's variants refer to its varset, else
//     to the enum of the active prefix attribute, else to the nearest
//     ancestor's varset. Top-level entities may appear anywhere and are
//     merged by name. Documentation elements are skipped; the prefix
//     attribute does not change names (see Naming). envytools' own rnndb
//     (root.xml and its imports) loads in about half a second.
//   - the native YAML form below, pleasant to write by hand and able to say
//     which PCI devices a domain describes.
//
// Errors carry the file and line (*SyntaxError, wrapping ErrInvalid).
// Untrusted input is bounded: file sizes, import counts, nesting depth,
// YAML alias expansion and array expansion are capped.
//
// # Native form
//
//	name: e1000                 # optional, informative
//	doc: free text              # optional
//	enums:
//	  speed: {0: "10", 1: "100", 2: "1000"}   # value: name
//	  chip: [A0, B0, C0]        # a list: a variant set, in order
//	bitsets:
//	  irq:                      # fields, as under a register's fields:
//	    TXDW: 0
//	domains:
//	  E1000:
//	    size: 0x20000           # in units; optional
//	    width: 8                # bits per addressable unit, default 8
//	    pci: ["8086:100e"]      # devices whose BAR this domain describes
//	    bar: 0                  # which BAR, default 0
//	    registers:
//	      STATUS: 0x0008        # offset only: a 32-bit register
//	      CTRL:
//	        offset: 0x0000
//	        width: 32           # 8, 16, 32 (default) or 64
//	        access: rw          # r, w or rw (default)
//	        doc: Device Control
//	        variants: "B0-"     # rnndb variant syntax; varset: to name the set
//	        fields:
//	          FD: 0                                  # one bit
//	          SPEED: {bits: "9:8", type: speed}      # HIGH:LOW (or LOW-HIGH, LOW..HIGH)
//	          MODE: {bits: "13:12", values: {0: OFF, 3: ON}}
//	          RTL: {bits: "15:3", type: uint, shr: 3}
//	      IMC: {offset: 0x00d8, access: w, type: irq}
//	      MTA: {offset: 0x5200, length: 128}          # MTA[0] .. MTA[127], stride = size
//	      RAH: {offset: 0x5404, length: 16, stride: 8}
//	      QUEUE:                                      # an array: has registers
//	        offset: 0x2800
//	        stride: 0x100
//	        length: 2
//	        registers:
//	          RDBAL: 0x00
//	          RDH: {offset: 0x10, type: uint}
//
// Types (type: on registers and fields) are hex (the default), uint, int,
// boolean, float, or the name of an enum or bitset. Without a type, a
// register with fields is a bitset, one with values an enum, a one-bit
// field a flag.
//
// # Naming
//
// Names join the names of enclosing arrays and named stripes with '.', and
// add [i] for every repeated level: "CH[2].SLOT[1].CFG". The index of an
// unnamed stripe goes to the next name. An access that starts inside a
// register gets "+0xN" (in units). Decoding lists set flags, fields with a
// non-zero value or a named value, and "unk=0x..." for set bits that no
// field describes.
//
// The shipped databases (Builtin, Builtins) are in regdb/db: "e1000", for
// the Intel 8254x gigabit controllers, written from the public developer's
// manual.
package regdb
