package regdb

import (
	"fmt"
	"math/bits"
	"sort"
	"strconv"
)

// Expansion limits: register instances of arrays are expanded into a sorted
// table for fast lookup up to these counts; larger arrays are solved
// arithmetically at lookup time.
const (
	maxLeafExpand = 1 << 12
	maxDBExpand   = 1 << 17 // expanded instances, all domains together
	maxLeaves     = 1 << 18 // register placements (groups multiply them)
	maxNesting    = 32
)

type dim struct{ stride, length uint64 }

type namePart struct {
	name string
	dims []int // indices into leaf.dims shown as [i] after the name
}

// leaf is one register definition placed in a domain, possibly repeated
// along dims (outermost first).
type leaf struct {
	reg   *Register
	base  uint64 // offset of instance 0
	size  uint64 // in domain units
	dims  []dim
	parts []namePart
	count uint64 // number of instances
}

type slot struct {
	lo   uint64
	leaf int32
	n    uint64 // instance number (mixed radix over leaf.dims)
}

type index struct {
	leaves  []leaf
	slots   []slot // sorted by lo, then leaf
	big     []int32
	maxSize uint64
}

func (db *DB) buildIndexes() error {
	budget := uint64(maxDBExpand)
	leaves := 0
	for _, d := range db.Domains {
		ix := &index{}
		b := indexBuilder{db: db, d: d, ix: ix, budget: budget, leaves: leaves}
		if !db.included(d.Variants) {
			d.index = ix
			continue
		}
		if err := b.walk(d.Items, 0, nil, nil, nil, 0); err != nil {
			return err
		}
		budget, leaves = b.budget, b.leaves
		sort.SliceStable(ix.slots, func(i, j int) bool {
			if ix.slots[i].lo != ix.slots[j].lo {
				return ix.slots[i].lo < ix.slots[j].lo
			}
			return ix.slots[i].leaf < ix.slots[j].leaf
		})
		d.index = ix
	}
	return nil
}

type indexBuilder struct {
	db     *DB
	d      *Domain
	ix     *index
	budget uint64
	leaves int
	visits int
}

func (b *indexBuilder) walk(items []Node, base uint64, dims []dim, parts []namePart, pending []int, depth int) error {
	if depth > maxNesting {
		return fmt.Errorf("regdb: domain %s: nesting deeper than %d (recursive group?): %w", b.d.Name, maxNesting, ErrInvalid)
	}
	for _, it := range items {
		b.visits++
		if b.visits > 4*maxLeaves {
			return fmt.Errorf("regdb: domain %s: more than %d items after expanding groups: %w", b.d.Name, 4*maxLeaves, ErrInvalid)
		}
		switch n := it.(type) {
		case *Register:
			if !b.db.included(n.Variants) {
				continue
			}
			if err := b.addRegister(n, base, dims, parts, pending); err != nil {
				return err
			}
		case *Array:
			if !b.db.included(n.Variants) {
				continue
			}
			off, ok := addU(base, n.Offset)
			if !ok {
				return n.Pos.errorf("offset overflows")
			}
			cd, cp, pend := dims, parts, pending
			if n.Length > 1 {
				cd = appendDim(dims, dim{n.Stride, n.Length})
				pend = appendInt(pending, len(cd)-1)
			}
			if n.Name != "" {
				cp = appendPart(parts, namePart{n.Name, pend})
				pend = nil
			}
			if err := b.walk(n.Items, off, cd, cp, pend, depth+1); err != nil {
				return err
			}
		case *UseGroup:
			g, ok := b.db.Groups[n.Name]
			if !ok {
				return n.Pos.errorf("use-group: unknown group %q", n.Name)
			}
			if err := b.walk(g.Items, base, dims, parts, pending, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *indexBuilder) addRegister(r *Register, base uint64, dims []dim, parts []namePart, pending []int) error {
	unit := b.d.Width
	if unit == 0 {
		unit = 8
	}
	size := uint64(r.Width / unit)
	if size == 0 {
		size = 1
	}
	off, ok := addU(base, r.Offset)
	if !ok {
		return r.Pos.errorf("register %s: offset overflows", r.Name)
	}
	if r.Length > 1 {
		stride := r.Stride
		if stride == 0 {
			stride = size
		}
		dims = appendDim(dims, dim{stride, r.Length})
		pending = appendInt(pending, len(dims)-1)
	}
	parts = appendPart(parts, namePart{r.Name, pending})
	count := uint64(1)
	for _, dm := range dims {
		hi, lo := bits.Mul64(count, dm.length)
		if hi != 0 {
			return r.Pos.errorf("register %s: too many instances", r.Name)
		}
		count = lo
	}
	// the last instance must not overflow
	last := off
	for _, dm := range dims {
		hi, lo := bits.Mul64(dm.stride, dm.length-1)
		if hi != 0 {
			return r.Pos.errorf("register %s: array extends beyond 2^64", r.Name)
		}
		if last, ok = addU(last, lo); !ok {
			return r.Pos.errorf("register %s: array extends beyond 2^64", r.Name)
		}
	}
	if _, ok := addU(last, size); !ok {
		return r.Pos.errorf("register %s: array extends beyond 2^64", r.Name)
	}
	b.leaves++
	if b.leaves > maxLeaves {
		return r.Pos.errorf("more than %d register placements (groups used too often?)", maxLeaves)
	}
	li := int32(len(b.ix.leaves))
	b.ix.leaves = append(b.ix.leaves, leaf{reg: r, base: off, size: size, dims: dims, parts: parts, count: count})
	if size > b.ix.maxSize {
		b.ix.maxSize = size
	}
	if count > maxLeafExpand || count > b.budget {
		b.ix.big = append(b.ix.big, li)
		return nil
	}
	b.budget -= count
	lf := &b.ix.leaves[li]
	for n := uint64(0); n < count; n++ {
		b.ix.slots = append(b.ix.slots, slot{lo: lf.offsetOf(n), leaf: li, n: n})
	}
	return nil
}

// offsetOf returns the offset of instance n.
func (l *leaf) offsetOf(n uint64) uint64 {
	off := l.base
	for i := len(l.dims) - 1; i >= 0; i-- {
		d := l.dims[i]
		off += (n % d.length) * d.stride
		n /= d.length
	}
	return off
}

// solve finds the instance of a big leaf containing off, if any. Dimensions
// are peeled greedily from the outermost, which is exact for arrays whose
// elements do not overlap.
func (l *leaf) solve(off uint64) (uint64, bool) {
	if off < l.base {
		return 0, false
	}
	rem := off - l.base
	n := uint64(0)
	for _, d := range l.dims {
		i := uint64(0)
		if d.stride > 0 {
			i = rem / d.stride
		}
		if i >= d.length {
			i = d.length - 1
		}
		rem -= i * d.stride
		n = n*d.length + i
	}
	return n, rem < l.size
}

func appendDim(s []dim, d dim) []dim {
	out := make([]dim, len(s), len(s)+1)
	copy(out, s)
	return append(out, d)
}

func appendInt(s []int, v int) []int {
	out := make([]int, len(s), len(s)+1)
	copy(out, s)
	return append(out, v)
}

func appendPart(s []namePart, p namePart) []namePart {
	out := make([]namePart, len(s), len(s)+1)
	copy(out, s)
	return append(out, p)
}

func addU(a, b uint64) (uint64, bool) {
	s, c := bits.Add64(a, b, 0)
	return s, c == 0
}

// Match is the register instance found by Lookup.
type Match struct {
	Domain   *Domain
	Register *Register
	Offset   uint64 // offset of the register instance in the domain
	Delta    uint64 // the access started Delta units after Offset
	Width    uint   // the access width in bits (0 when unknown)

	db   *DB
	leaf *leaf
	n    uint64
}

// Exact reports whether the access covered exactly the register.
func (m Match) Exact() bool {
	return m.Delta == 0 && (m.Width == 0 || m.Width == m.Register.Width)
}

// Indices returns the array indices of the instance, outermost first.
func (m Match) Indices() []uint64 {
	if m.leaf == nil || len(m.leaf.dims) == 0 {
		return nil
	}
	out := make([]uint64, len(m.leaf.dims))
	n := m.n
	for i := len(m.leaf.dims) - 1; i >= 0; i-- {
		out[i] = n % m.leaf.dims[i].length
		n /= m.leaf.dims[i].length
	}
	return out
}

// Name returns the register's name with array indices, as in "RAL[3]" or
// "PGRAPH.TP[2].MP[1].TRAPPED_OPCODE", and "+0x2" when the access started
// inside the register.
func (m Match) Name() string { return string(m.AppendName(nil)) }

// AppendName appends Name to dst without allocating.
func (m Match) AppendName(dst []byte) []byte {
	if m.leaf == nil {
		return dst
	}
	var idx [maxNesting + 2]uint64
	nd := len(m.leaf.dims)
	n := m.n
	for i := nd - 1; i >= 0 && i < len(idx); i-- {
		idx[i] = n % m.leaf.dims[i].length
		n /= m.leaf.dims[i].length
	}
	for i, p := range m.leaf.parts {
		if i > 0 {
			dst = append(dst, '.')
		}
		dst = append(dst, p.name...)
		for _, d := range p.dims {
			dst = append(dst, '[')
			dst = strconv.AppendUint(dst, idx[d], 10)
			dst = append(dst, ']')
		}
	}
	if m.Delta != 0 {
		dst = append(dst, "+0x"...)
		dst = strconv.AppendUint(dst, m.Delta, 16)
	}
	return dst
}

// Lookup finds the register at offset (in domain units: bytes for the
// usual 8-bit domains) of the named domain. width is the access width in
// bits, 0 when unknown. A register starting at offset with the same width
// is preferred, then one starting at offset, then one containing offset.
func (db *DB) Lookup(domain string, offset uint64, width uint) (Match, bool) {
	d, ok := db.domains[domain]
	if !ok {
		return Match{}, false
	}
	return d.lookup(db, offset, width)
}

func (d *Domain) lookup(db *DB, off uint64, width uint) (Match, bool) {
	ix := d.index
	if ix == nil {
		return Match{}, false
	}
	best, bestRank := -1, 0
	var bestN uint64
	var bestLeaf int32
	consider := func(li int32, n, lo uint64) {
		lf := &ix.leaves[li]
		if off < lo || off-lo >= lf.size {
			return
		}
		rank := 1
		if lo == off {
			rank = 2
			if width == 0 || lf.reg.Width == width {
				rank = 3
			}
		}
		if rank > bestRank || (rank == bestRank && li < bestLeaf) {
			best, bestRank, bestN, bestLeaf = int(li), rank, n, li
		}
	}
	s := ix.slots
	i := sort.Search(len(s), func(i int) bool { return s[i].lo > off }) - 1
	for j := i; j >= 0; j-- {
		if off-s[j].lo >= ix.maxSize {
			break
		}
		consider(s[j].leaf, s[j].n, s[j].lo)
	}
	for _, li := range ix.big {
		lf := &ix.leaves[li]
		if n, ok := lf.solve(off); ok {
			consider(li, n, lf.offsetOf(n))
		}
	}
	if best < 0 {
		return Match{}, false
	}
	lf := &ix.leaves[best]
	start := lf.offsetOf(bestN)
	return Match{Domain: d, Register: lf.reg, Offset: start, Delta: off - start, Width: width, db: db, leaf: lf, n: bestN}, true
}

// LookupIn is Lookup with the domain already found with db.Domain: it
// saves a map access per call.
func (db *DB) LookupIn(d *Domain, offset uint64, width uint) (Match, bool) {
	return d.lookup(db, offset, width)
}
