package eventheader

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
)

// ParseArg parses a command-line field "name[:type]=value" into a Value.
// Types: u8 u16 u32 u64 (unsigned), s8 s16 s32 s64 (signed), x32 x64
// (hex), bool, errno, str (a NUL-terminated string), str16 and str32
// (the same in UTF-16 or UTF-32 characters), bin (hex bytes). Without a
// type, an integer is s64 and anything else a string. A type followed by
// [] makes a variable-length array of comma-separated values
// ("ports:u16[]=80,443"; an empty value is an empty array).
func ParseArg(arg string) (Value, error) {
	key, val, ok := strings.Cut(arg, "=")
	if !ok || key == "" {
		return Value{}, fmt.Errorf("eventheader: %q is not name=value", arg)
	}
	name, typ, _ := strings.Cut(key, ":")
	if elem, ok := strings.CutSuffix(typ, "[]"); ok {
		if elem == "" || elem == "bin" {
			return Value{}, fmt.Errorf("eventheader: field %q: arrays of %q are not supported (u8..u64, s8..s64, x32, x64, bool, errno, str, str16, str32)", name, elem)
		}
		v := Value{Name: name, Array: EncVArray}
		var parts []string
		if val != "" {
			parts = strings.Split(val, ",")
		}
		for _, p := range parts {
			e, err := ParseArg(name + ":" + elem + "=" + p)
			if err != nil {
				return Value{}, err
			}
			v.Encoding, v.Format = e.Encoding, e.Format
			v.Elems = append(v.Elems, Value{Data: e.Data})
		}
		if len(parts) == 0 {
			e, err := ParseArg(name + ":" + elem + "=0")
			if err != nil {
				e, err = ParseArg(name + ":" + elem + "=")
			}
			if err != nil {
				return Value{}, err
			}
			v.Encoding, v.Format = e.Encoding, e.Format
		}
		return v, nil
	}
	if typ == "" {
		if _, err := strconv.ParseInt(val, 0, 64); err == nil {
			typ = "s64"
		} else {
			typ = "str"
		}
	}
	v := Value{Name: name}
	le := binary.LittleEndian
	integer := func(bits int, signed bool) error {
		if signed {
			n, err := strconv.ParseInt(val, 0, bits)
			if err != nil {
				return err
			}
			v.Data = le.AppendUint64(nil, uint64(n))[:bits/8]
			return nil
		}
		n, err := strconv.ParseUint(val, 0, bits)
		if err != nil {
			return err
		}
		v.Data = le.AppendUint64(nil, n)[:bits/8]
		return nil
	}
	enc := map[int]uint8{8: EncValue8, 16: EncValue16, 32: EncValue32, 64: EncValue64}
	var err error
	switch typ {
	case "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "x32", "x64":
		bits, _ := strconv.Atoi(typ[1:])
		v.Encoding = enc[bits]
		switch typ[0] {
		case 's':
			v.Format = FmtSignedInt
		case 'x':
			v.Format = FmtHexInt
		}
		err = integer(bits, typ[0] == 's')
	case "bool":
		b, e := strconv.ParseBool(val)
		v.Encoding, v.Format, err = EncValue8, FmtBoolean, e
		if b {
			v.Data = []byte{1}
		} else {
			v.Data = []byte{0}
		}
	case "errno":
		v.Encoding, v.Format = EncValue32, FmtErrno
		err = integer(32, true)
	case "str":
		v.Encoding, v.Data = EncZStringChar8, []byte(val)
		if strings.IndexByte(val, 0) >= 0 {
			err = fmt.Errorf("NUL in a string")
		}
	case "str16", "str32":
		if strings.IndexByte(val, 0) >= 0 {
			err = fmt.Errorf("NUL in a string")
			break
		}
		if typ == "str16" {
			v.Encoding = EncZStringChar16
			for _, u := range utf16.Encode([]rune(val)) {
				v.Data = le.AppendUint16(v.Data, u)
			}
		} else {
			v.Encoding = EncZStringChar32
			for _, r := range val {
				v.Data = le.AppendUint32(v.Data, uint32(r))
			}
		}
	case "bin":
		v.Encoding = EncBinaryLength16Char8
		v.Data, err = hex.DecodeString(val)
	default:
		return Value{}, fmt.Errorf("eventheader: field %q: unknown type %q (u8..u64, s8..s64, x32, x64, bool, errno, str, str16, str32, bin, TYPE[] for arrays)", name, typ)
	}
	if err != nil {
		return Value{}, fmt.Errorf("eventheader: field %q: %q is not a %s: %v", name, val, typ, err)
	}
	return v, nil
}
