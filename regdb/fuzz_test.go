package regdb

import (
	"bytes"
	"os"
	"testing"
)

func addSeedFiles(f *testing.F, names ...string) {
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// exercise looks up and decodes around every register of db and checks
// that the allocation-free and the structured decoders agree.
func exercise(t *testing.T, db *DB, values ...uint64) {
	for _, d := range db.Domains {
		if d.index == nil {
			t.Fatalf("domain %s has no index", d.Name)
		}
		n := 0
		for _, s := range d.index.slots {
			if n++; n > 64 {
				break
			}
			for _, w := range []uint{0, 8, 32} {
				for _, delta := range []uint64{0, 1} {
					m, ok := db.Lookup(d.Name, s.lo+delta, w)
					if !ok {
						continue
					}
					checkMatch(t, m, s.lo+delta, values...)
				}
			}
		}
	}
}

func checkMatch(t *testing.T, m Match, off uint64, values ...uint64) {
	t.Helper()
	size := uint64(m.Register.Width / max(m.Domain.Width, 8))
	if off < m.Offset || off-m.Offset >= max(size, 1) {
		t.Fatalf("Lookup(%#x) = %s at %#x size %d: does not contain the offset", off, m.Name(), m.Offset, size)
	}
	if string(m.AppendName(nil)) != m.Name() {
		t.Fatal("AppendName and Name differ")
	}
	for _, v := range values {
		s := m.Format(v)
		if !bytes.Equal(m.AppendFormat(nil, v), []byte(s)) {
			t.Fatal("AppendFormat and Format differ")
		}
		fs := m.Decode(v)
		dec := string(m.AppendDecoded(nil, v))
		if m.Register.Type.Kind == KindBitset && FormatFields(fs) != dec {
			t.Fatalf("%s: Decode gives %s, AppendDecoded %s", m.Name(), FormatFields(fs), dec)
		}
	}
}

func FuzzLoadXML(f *testing.F) {
	addSeedFiles(f, "testdata/rnndb/sub/defs.xml", "testdata/rnndb/common.xml")
	f.Add([]byte(`<database><domain name="D"><array name="A" offset="0" stride="8" length="4"><reg32 offset="4" name="R"><bitfield low="0" high="3" name="F" type="uint"/></reg32></array></domain></database>`))
	f.Add([]byte(`<database><bitset name="b"><bitfield pos="0" name="X" type="b"/></bitset><domain name="D"><reg32 offset="0" name="R" type="b"/></domain></database>`))
	f.Add([]byte(`<database><enum name="v"><value name="A"/><value name="B"/></enum><domain name="D" width="32"><stripe variants="A-B" stride="2" length="3"><reg64 offset="1" name="R"/></stripe></domain></database>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		db, err := LoadBytes("fuzz.xml", data)
		if err != nil {
			return
		}
		exercise(t, db, 0, 1, 0xffffffff, 0x8000000000000001)
	})
}

func FuzzLoadYAML(f *testing.F) {
	addSeedFiles(f, "testdata/native.yaml")
	f.Add([]byte("domains: {D: {registers: {R: {offset: 4, fields: {A: 0, B: \"7:4\"}}}}}"))
	f.Add([]byte("enums: {v: [A, B]}\ndomains: {D: {registers: {R: {offset: 0, variants: \"A-\"}}}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		db, err := LoadBytes("fuzz.yaml", data)
		if err != nil {
			return
		}
		exercise(t, db, 0, 1, 0xffffffff, 0x8000000000000001)
	})
}

func FuzzDecode(f *testing.F) {
	e1000, err := Builtin("e1000")
	if err != nil {
		f.Fatal(err)
	}
	xdb, err := LoadFile("testdata/rnndb/main.xml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint64(0xd8), uint8(4), uint64(0xffffffff))
	f.Add(uint64(0x0), uint8(1), uint64(0x40))
	f.Add(uint64(0x5404), uint8(4), uint64(0x80005634))
	f.Add(uint64(0x1250), uint8(4), uint64(6))
	f.Add(uint64(0x3c), uint8(8), uint64(0xffffffffffffffff))
	f.Fuzz(func(t *testing.T, off uint64, width uint8, value uint64) {
		for _, c := range []struct {
			db  *DB
			dom string
		}{{e1000, "E1000"}, {xdb, "DEV"}, {xdb, "IDX"}} {
			m, ok := c.db.Lookup(c.dom, off, uint(width)*8)
			if ok {
				checkMatch(t, m, off, value)
			}
		}
	})
}
