package mmiotrace

import (
	"encoding/binary"
	"math/bits"
)

// checkRW is the filter's innermost loop for criteria that look only at
// an R/W line's kind, width, map id and physical address (no value or
// time criteria). It validates the lines at the start of data that have
// the kernel's usual form, "R|W <w> <sec>.<6 digits> <id> 0x<hex>
// 0x<hex> 0x<hex> <pid>\n" with 1 to 7 digits of seconds, map id and
// PID, and 1 to 8 or exactly 16 digits or lower-case hex letters per hex
// field, by matching each one against the shape (field positions) of
// earlier lines, a whole line in a few vector operations (rwShape,
// lineShapes), rather than field by field; a line of a new shape is
// checked field by field once to build its shape. Nothing is converted
// for a line whose kind or width the filter drops; for the others it
// converts the map id and address and asks f.matchRW, appending the line
// to out when it matches. sh keeps the shapes from call to call.
//
// It returns the rest of data from the first line it does not take (of
// another shape, bad, or in the last rwFastLen bytes: the caller parses
// that one with parseRWFast or the reference parser), the output, and
// the numbers of lines taken and kept. Every line it takes,
// parseRWFields accepts with the same end and the same kind, width, map
// id and address (TestCheckRWMatchesParse, FuzzCheckRW).
func checkRW(f *Filter, data, out []byte, sh *lineShapes) ([]byte, []byte, int64, int64) {
	var rec Record
	var lines, kept int64
	for {
		n, k, cand := checkRWLines(data, f.Kinds, f.Widths, &rec, sh)
		lines += k
		if !cand {
			return data[n:], out, lines, kept
		}
		if f.matchRW(&rec) {
			kept++
			out = append(out, data[n-len(rec.Line)-1:n]...)
		}
		data = data[n:]
	}
}

// rwShape is the template of one line shape: the positions of the
// fields of an R/W line of the kernel's form, as masks over the bytes of
// the line, so that a line of the same shape is checked without a
// branch per field. Byte i of the line must equal fix[i] where mask[i]
// is 0xff (the separators, "0x", the newline; fix is 0 elsewhere), and
// be a digit, or a letter a-f where letter[i] is 0xff (hex digits), or
// anything where free[i] is 0xff (not a number). The kind and width
// bytes (0 and 2) and the bytes after the newline are free here: fix,
// mask, free and letter must stay the first fields (shape_amd64.s).
type rwShape struct {
	fix, mask, free, letter [rwShapeLen]byte
	// Line length with the newline, 16-byte blocks; map id and physical
	// address: index of the first digit and number of digits.
	n, nv, id, idn, phys, physn int
}

// rwShapeLen is the longest line parseRWFast takes (92 bytes) in whole
// 16-byte blocks.
const rwShapeLen = 96

// matchWords reports whether the line at a has shape s, eight bytes at
// a time (match, on amd64 16 at a time, gives the same answers). Every byte of the
// words it checks is read: a byte >= 0x80 anywhere in them (even after
// the newline) fails the match, which only sends the line the slow way.
func (s *rwShape) matchWords(a *rwWindow) bool {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	if s.nv == 0 {
		return false
	}
	for k := 0; k < 2*s.nv && k < rwShapeLen/8; k++ {
		x := le64(a, 8*k)
		fix := binary.LittleEndian.Uint64(s.fix[8*k:])
		mask := binary.LittleEndian.Uint64(s.mask[8*k:])
		free := binary.LittleEndian.Uint64(s.free[8*k:])
		letter := binary.LittleEndian.Uint64(s.letter[8*k:])
		digit := (x + (0x80-'0')*ones) ^ (x + (0x7f-'9')*ones)
		lett := (x + (0x80-'a')*ones) ^ (x + (0x7f-'f')*ones)
		if x&mask != fix || (^(digit|lett&letter|free)|x)&high != 0 {
			return false
		}
	}
	return true
}

// build sets s to the shape of the line at a if it is an R/W line of
// the form parseRWFast takes with 1 to 8 or 16 digits per hex field,
// and reports whether it is. The kind and width bytes are not checked
// (the caller does).
func (s *rwShape) build(a *rwWindow) bool {
	s.fix, s.mask, s.letter = [rwShapeLen]byte{}, [rwShapeLen]byte{}, [rwShapeLen]byte{}
	for i := range s.free {
		s.free[i] = 0xff
	}
	if a[1] != ' ' || a[3] != ' ' {
		return false
	}
	s.set(1, ' ')
	s.set(3, ' ')
	// Seconds: 1 to 7 digits, then ".dddddd ".
	x := le64(a, 4)
	n := bits.TrailingZeros64(nonDigitMask(x)) >> 3
	if n == 0 || n == 8 || byte(x>>(8*n)) != '.' {
		return false
	}
	i := 4 + n
	if us := le64(a, i); byte(us>>56) != ' ' || nonDigitMask(us)&0x0080808080808000 != 0 {
		return false
	}
	s.number(4, n, false)
	s.set(i, '.')
	s.number(i+1, 6, false)
	s.set(i+7, ' ')
	i += 8
	// Map id: 1 to 7 digits, then a space.
	x = le64(a, i)
	n = bits.TrailingZeros64(nonDigitMask(x)) >> 3
	if n == 0 || n == 8 || byte(x>>(8*n)) != ' ' {
		return false
	}
	s.id, s.idn = i, n
	s.number(i, n, false)
	s.set(i+n, ' ')
	i += n + 1
	// The three hex fields: i is at most 27 here, 84 after them.
	for f := 0; f < 3; f++ {
		if n = hexLen(a, i); n == 0 {
			return false
		}
		if f == 0 {
			s.phys, s.physn = i+2, n
		}
		s.set(i, '0')
		s.set(i+1, 'x')
		s.number(i+2, n, true)
		s.set(i+2+n, ' ')
		i += n + 3
	}
	// PID: 1 to 7 digits, then the newline (at most at 91).
	x = le64(a, i)
	n = bits.TrailingZeros64(nonDigitMask(x)) >> 3
	if n == 0 || n == 8 || byte(x>>(8*n)) != '\n' {
		return false
	}
	s.number(i, n, false)
	s.set(i+n, '\n')
	s.n = i + n + 1
	s.nv = (s.n + 15) / 16
	return true
}

// set makes byte i of the shape the byte c.
func (s *rwShape) set(i int, c byte) { s.fix[i], s.mask[i] = c, 0xff }

// number makes bytes i to i+n-1 of the shape digits (hex digits if hex).
func (s *rwShape) number(i, n int, hex bool) {
	for j := i; j < i+n; j++ {
		s.free[j] = 0
		if hex {
			s.letter[j] = 0xff
		}
	}
}

// checkRWLines validates the lines at the start of data as checkRW
// describes and returns the number of bytes and lines it took. Each line
// is matched against the shapes in sh (a new shape replaces one of them
// when none matches). It stops after the first line of a kind and width
// in kinds and widths (0: all), returning cand true with r's Kind,
// Width, MapID, Phys and Line (without the newline) set for it.
func checkRWLines(data []byte, kinds KindSet, widths uint16, r *Record, sh *lineShapes) (int, int64, bool) {
	var lines int64
	p := 0
	for p <= len(data)-rwFastLen {
		a := (*rwWindow)(data[p:])
		// Kind and width (1, 2, 4 or 8); the shape checks the rest.
		w := a[2] - '0'
		if w > 8 || (0x116>>w)&1 == 0 {
			break
		}
		kind := KindRead
		if a[0] != 'R' {
			if a[0] != 'W' {
				break
			}
			kind = KindWrite
		}
		t := &sh.s[sh.order[0]&3]
		if t.match(a) {
			sh.hits[sh.order[0]&3]++
		} else {
			t = sh.find(a)
			if t == nil {
				break
			}
		}
		i := t.n - 1
		lines++
		if (kinds == 0 || kinds.Has(kind)) && (widths == 0 || widths&(1<<w) != 0) {
			r.Kind, r.Width = kind, w
			r.MapID = int32(dec8(le64(a, t.id) << (64 - 8*(t.idn&7))))
			r.Phys = hexDigitsAt(a, t.phys, t.physn)
			r.Line = data[p : p+i]
			return p + i + 1, lines, true
		}
		p += i + 1
	}
	return p, lines, false
}

// lineShapes holds the shapes checkRWLines tries, in the order of
// order: a shape that matched more lines than the one before it moves
// ahead of it; a line of a new shape replaces the last.
type lineShapes struct {
	s     [4]rwShape
	hits  [4]int64
	order [4]uint8
	init  bool
	// Lines no shape matched; off: more than one in nine lines (a log
	// whose lines change shape all the time, where building shapes costs
	// more than they save): the caller then checks the rest of its data
	// field by field (filterRWFast).
	misses int64
	off    bool
}

// find returns the shape of sh other than the first that the line at a
// matches, after building it (in place of the last) if none does, or nil
// if the line has none or sh is now off.
func (sh *lineShapes) find(a *rwWindow) *rwShape {
	if !sh.init {
		sh.order, sh.init = [4]uint8{0, 1, 2, 3}, true
	}
	for k := 1; k < len(sh.order); k++ {
		j := sh.order[k] & 3
		if sh.s[j].match(a) {
			if sh.hits[j]++; sh.hits[j] > sh.hits[sh.order[k-1]&3] {
				sh.order[k-1], sh.order[k] = j, sh.order[k-1]
			}
			return &sh.s[j]
		}
	}
	if sh.misses++; sh.misses >= 64 && 8*sh.misses > sh.hits[0]+sh.hits[1]+sh.hits[2]+sh.hits[3] {
		sh.off = true
		return nil
	}
	j := sh.order[len(sh.order)-1] & 3
	if sh.s[sh.order[0]&3].nv == 0 {
		j = sh.order[0] & 3
	}
	sh.hits[j] = 1
	if !sh.s[j].build(a) {
		sh.s[j], sh.hits[j] = rwShape{}, 0
		return nil
	}
	return &sh.s[j]
}

// hexLen returns the number of digits of the "0x<hex> " field at a[i:]
// if it has 1 to 8 or 16 digits or lower-case hex letters, else 0. It
// reads a[i:i+19].
func hexLen(a *rwWindow, i int) int {
	if le16(a, i) != 'x'<<8|'0' {
		return 0
	}
	x := le64(a, i+2)
	if m := nonHexMask(x); m != 0 {
		n := bits.TrailingZeros64(m) >> 3
		if n == 0 || byte(x>>(8*n)) != ' ' {
			return 0
		}
		return n
	}
	y := le64(a, i+10)
	if byte(y) == ' ' {
		return 8
	}
	if nonHexMask(y) == 0 && at(a, i+18) == ' ' {
		return 16
	}
	return 0
}

// hexDigitsAt converts the n digits (1 to 8, or 16) at a[i:] that hexLen
// counted.
func hexDigitsAt(a *rwWindow, i, n int) uint64 {
	if n == 16 {
		return hexWordMul(le64(a, i))<<32 | hexWordMul(le64(a, i+8))
	}
	return hexWordMul(le64(a, i) << (64 - 8*n))
}
