package filter

import "strconv"

// Int is an integer of the range of both int64 and uint64 (a 65-bit
// signed value), so that unsigned 64-bit addresses and negative statuses
// compare correctly with each other and with literals.
type Int struct {
	neg bool   // value is mag - 2^64 (only for negative int64 values)
	mag uint64 // two's complement bits when neg
}

// Uint returns the Int of u.
func Uint(u uint64) Int { return Int{mag: u} }

// Signed returns the Int of i.
func Signed(i int64) Int { return Int{neg: i < 0, mag: uint64(i)} }

// Cmp returns -1, 0 or +1 as a is less than, equal to or greater than b.
func (a Int) Cmp(b Int) int {
	if a.neg != b.neg {
		if a.neg {
			return -1
		}
		return 1
	}
	// Same sign: the bit patterns order as the values do.
	switch {
	case a.mag < b.mag:
		return -1
	case a.mag > b.mag:
		return 1
	}
	return 0
}

func (a Int) String() string {
	if a.neg {
		return strconv.FormatInt(int64(a.mag), 10)
	}
	return strconv.FormatUint(a.mag, 10)
}
