package regdb

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func loadTestXML(t *testing.T) *DB {
	t.Helper()
	db, err := LoadFile("testdata/rnndb/main.xml")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestXMLFeatures looks up and decodes registers of testdata/rnndb, which
// exercises every rnndb feature the loader supports.
func TestXMLFeatures(t *testing.T) {
	db := loadTestXML(t)
	tests := []struct {
		name    string
		variant string
		domain  string
		off     uint64
		width   uint
		value   uint64
		want    string // Format; "" means no register
		index   []uint64
	}{
		{"bitfields low/high, pos, uint, hex", "", "DEV", 0x0, 32, 0x80011234, "ID = 0x80011234 {DEVICE=0x1234, REV=1, PRESENT}", nil},
		{"named bitset with enum field", "", "DEV", 0x4, 32, 0x121, "CTRL = 0x00000121 {ENABLE, SPEED=S1000, TURBO}", nil},
		{"enum field value zero is named", "", "DEV", 0x4, 32, 0x2, "CTRL = 0x00000002 {RESET, SPEED=S10}", nil},
		{"variant removes a bitfield", "CHIP_A", "DEV", 0x4, 32, 0x121, "CTRL = 0x00000121 {ENABLE, SPEED=S1000, unk=0x100}", nil},
		{"variant range keeps a bitfield", "chip=CHIP_C", "DEV", 0x4, 32, 0x100, "CTRL = 0x00000100 {SPEED=S10, TURBO}", nil},
		{"inline values", "", "DEV", 0x8, 32, 1, "MODE = 0x00000001 (ON)", nil},
		{"inline value with variants", "", "DEV", 0x8, 32, 2, "MODE = 0x00000002 (TURBO)", nil},
		{"inline value excluded by variant", "CHIP_A", "DEV", 0x8, 32, 2, "MODE = 0x00000002", nil},
		{"enum type from an imported file", "", "DEV", 0xc, 32, 3, "POWER = 0x00000003 (D3)", nil},
		{"reg8", "", "DEV", 0x10, 8, 0x7f, "BYTE = 0x7f", nil},
		{"reg16 int", "", "DEV", 0x12, 16, 0xfffe, "HALF = 0xfffe (-2)", nil},
		{"reg64 uint", "", "DEV", 0x18, 64, 16, "COUNTER = 0x0000000000000010 (16)", nil},
		{"register length", "", "DEV", 0x28, 32, 5, "FIFO[2] = 0x00000005", []uint64{2}},
		{"boolean register", "", "DEV", 0x34, 32, 1, "FLAG = 0x00000001", nil},
		{"same offset, no variant: first defined", "", "DEV", 0x38, 32, 0, "NEWREG = 0x00000000", nil},
		{"same offset, variant before CHIP_C", "CHIP_B", "DEV", 0x38, 32, 0, "OLDREG = 0x00000000", nil},
		{"same offset, variant CHIP_C", "CHIP_C", "DEV", 0x38, 32, 0, "NEWREG = 0x00000000", nil},
		{"same offset, variant in neither", "CHIP_D", "DEV", 0x38, 32, 0, "", nil},
		{"signed, nested bitset, shr fields", "", "DEV", 0x3c, 32, 0x000503e3, "MIXED = 0x000503e3 {LO=0x3, SIGNED=-2, SUB={X, Y}, SHIFTED=80}", nil},
		{"bitfield variant excluded", "CHIP_B", "DEV", 0x3c, 32, 0x3, "MIXED = 0x00000003 {unk=0x3}", nil},
		{"nested arrays and use-group", "", "DEV", 0x1250, 32, 6, "CH[2].SLOT[1].CFG = 0x00000006 {KIND=OUT, EN}", []uint64{2, 1}},
		{"array register", "", "DEV", 0x1304, 32, 64, "CH[3].LEN = 0x00000040 (64)", []uint64{3}},
		{"array gap", "", "DEV", 0x1308, 32, 0, "", nil},
		{"nameless stripe index goes to the register", "", "DEV", 0x2004, 32, 0, "BASE[1] = 0x00000000", []uint64{1}},
		{"stripe item beyond the stride", "", "DEV", 0x200c, 32, 0, "LIMIT[1] = 0x00000000", []uint64{1}},
		{"named stripe prefixes", "", "DEV", 0x3010, 32, 0, "PFX.INNER = 0x00000000", nil},
		{"stripe variants, none selected", "", "DEV", 0x4000, 32, 0, "B_ONLY = 0x00000000", nil},
		{"stripe variants excluded", "CHIP_A", "DEV", 0x4000, 32, 0, "", nil},
		{"enum defined inside a stripe", "", "DEV", 0x4004, 32, 7, "USES_INNER = 0x00000007 (SEVEN)", nil},
		{"merged domain", "", "DEV", 0x5000, 32, 0, "MERGED = 0x00000000", nil},
		{"byte access inside a register", "", "DEV", 0x5, 8, 0x01, "CTRL+0x1 = 0x01 {TURBO}", nil},
		{"nothing there", "", "DEV", 0x7800, 32, 0, "", nil},
		{"32-bit units", "", "IDX", 1, 32, 9, "CHANNEL = 0x00000009", nil},
		{"reg64 spans two 32-bit units", "", "IDX", 3, 32, 9, "ADDR+0x1 = 0x00000009", nil},
		{"unknown domain", "", "NOPE", 0, 32, 0, "", nil},
		{"bitfields inside a bitfield", "", "DEV", 0x40, 32, 0x300, "NESTED = 0x00000300 {CMD={IO, MEM}}", nil},
		{"spectype alias", "", "DEV", 0x44, 32, 10, "SPEC = 0x0000000a (10)", nil},
		{"nameless array index goes to the register", "", "DEV", 0x7004, 32, 0, "NA[1] = 0x00000000", []uint64{1}},
		{"prefix enum for children, varset for the stripe", "cls=CLS_Y,chip=CHIP_C", "DEV", 0x6000, 32, 0, "OBJ.P = 0x00000000", nil},
		{"child excluded by the prefix enum", "CLS_Y,CHIP_A", "DEV", 0x6000, 32, 0, "", nil},
		{"stripe excluded by its varset", "CLS_X,CHIP_C", "DEV", 0x6000, 32, 0, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := db.WithVariant(tt.variant)
			if err != nil {
				t.Fatal(err)
			}
			m, ok := v.Lookup(tt.domain, tt.off, tt.width)
			if tt.want == "" {
				if ok {
					t.Fatalf("Lookup(%s, %#x) = %s, want nothing", tt.domain, tt.off, m.Name())
				}
				return
			}
			if !ok {
				t.Fatalf("Lookup(%s, %#x): not found, want %s", tt.domain, tt.off, tt.want)
			}
			if got := m.Format(tt.value); got != tt.want {
				t.Errorf("Format = %q, want %q", got, tt.want)
			}
			if got := m.Indices(); !slices.Equal(got, tt.index) {
				t.Errorf("Indices = %v, want %v", got, tt.index)
			}
		})
	}
}

func TestXMLModel(t *testing.T) {
	db := loadTestXML(t)
	m, ok := db.Lookup("DEV", 0x20, 32)
	if !ok || m.Register.Access != WriteOnly || m.Register.Length != 4 {
		t.Errorf("FIFO: access %v length %d, want w and 4", m.Register.Access, m.Register.Length)
	}
	m, _ = db.Lookup("DEV", 0x0, 32)
	if m.Register.Access != ReadOnly || m.Register.Pos.Line != 11 || !strings.HasSuffix(m.Register.Pos.File, "main.xml") {
		t.Errorf("ID: access %v at %s:%d, want r at main.xml:11", m.Register.Access, m.Register.Pos.File, m.Register.Pos.Line)
	}
	m, _ = db.Lookup("DEV", 0x30, 32)
	if m.Register.Shr != 12 {
		t.Errorf("SCALED shr = %d, want 12", m.Register.Shr)
	}
	m, _ = db.Lookup("DEV", 0x38, 32)
	if m.Register.Variants.Spec != "CHIP_C" || m.Register.Variants.Varset != "chip" {
		t.Errorf("NEWREG variants = %+v, want CHIP_C of chip", m.Register.Variants)
	}
	d, ok := db.Domain("DEV")
	if !ok || d.Size != 0x10000 || !d.Bare {
		t.Errorf("DEV domain = %+v", d)
	}
	d, _ = db.Domain("IDX")
	if d.Width != 32 || d.Size != 6 {
		t.Errorf("IDX width %d size %d, want 32 and 6", d.Width, d.Size)
	}
	if bs := db.Bitsets["sub_bits"]; bs == nil || !bs.Inline {
		t.Errorf("sub_bits not inline: %+v", bs)
	}
	sel := map[string]string{"chip": "CHIP_B"}
	v, _ := db.WithVariant("CHIP_B")
	if got := v.Selected(); len(got) != 1 || got["chip"] != sel["chip"] {
		t.Errorf("Selected = %v, want %v", got, sel)
	}
	// the original is not changed by WithVariant
	if _, ok := db.Lookup("DEV", 0x38, 32); !ok {
		t.Error("WithVariant changed the original database")
	}
}

func TestWithVariantErrors(t *testing.T) {
	db := loadTestXML(t)
	for _, sel := range []string{"CHIP_Z", "nope=CHIP_A", "chip=CHIP_Z"} {
		if _, err := db.WithVariant(sel); !errors.Is(err, ErrNotFound) {
			t.Errorf("WithVariant(%q) = %v, want ErrNotFound", sel, err)
		}
	}
}

func TestXMLErrors(t *testing.T) {
	const head = "<database>\n"
	tests := []struct {
		name string
		xml  string
		want string // substring of the error, including the position
	}{
		{"syntax", head + "<domain name=\"D\">\n</database>", "t.xml:3:"},
		{"not a database", "<foo/>", "t.xml:1: root element is <foo>"},
		{"unknown element", head + "<domain name=\"D\">\n<reg33 offset=\"0\" name=\"X\"/>\n</domain></database>", "t.xml:3: unexpected <reg33> in <domain>"},
		{"register without name", head + "<domain name=\"D\">\n<reg32 offset=\"0\"/>\n</domain></database>", "t.xml:3: <reg32> without name"},
		{"register without offset", head + "<domain name=\"D\">\n<reg32 name=\"X\"/>\n</domain></database>", "t.xml:3: <reg32> without offset"},
		{"bad number", head + "<domain name=\"D\">\n<reg32 name=\"X\" offset=\"0xzz\"/>\n</domain></database>", "t.xml:3: <reg32 offset=\"0xzz\">: not a number"},
		{"bitfield too wide", head + "<domain name=\"D\">\n<reg8 name=\"X\" offset=\"0\">\n<bitfield name=\"B\" low=\"4\" high=\"9\"/>\n</reg8></domain></database>", "t.xml:4: bitfield B: bits 4..9 do not fit 8 bits"},
		{"bitfield low > high", head + "<bitset name=\"b\">\n<bitfield name=\"B\" low=\"4\" high=\"2\"/>\n</bitset></database>", "t.xml:3: <bitfield B>: low 4 > high 2"},
		{"bitfield without bits", head + "<bitset name=\"b\">\n<bitfield name=\"B\"/>\n</bitset></database>", "t.xml:3: <bitfield B> needs low and high, or pos"},
		{"unknown type", head + "<domain name=\"D\">\n<reg32 name=\"X\" offset=\"0\" type=\"nope\"/>\n</domain></database>", "t.xml:3: unknown type \"nope\""},
		{"unknown group", head + "<domain name=\"D\">\n<use-group name=\"g\"/>\n</domain></database>", "t.xml:3: use-group: unknown group \"g\""},
		{"unknown variant", head + "<enum name=\"v\"><value name=\"A\"/></enum>\n<domain name=\"D\">\n<reg32 name=\"X\" offset=\"0\" variants=\"A-Q\"/>\n</domain></database>", "t.xml:4: variants \"A-Q\": unknown variant \"Q\""},
		{"variant of no enum", head + "<domain name=\"D\">\n<reg32 name=\"X\" offset=\"0\" variants=\"Q\"/>\n</domain></database>", "t.xml:3: variants \"Q\": no enum defines variant \"Q\""},
		{"missing import", head + "<import file=\"nope.xml\"/>\n</database>", "t.xml:2: import \"nope.xml\": file not found"},
		{"array without stride", head + "<domain name=\"D\">\n<array name=\"A\" offset=\"0\" length=\"2\"/>\n</domain></database>", "t.xml:3: <array> without stride"},
		{"stripe stride 0", head + "<domain name=\"D\">\n<stripe offset=\"0\" length=\"2\"/>\n</domain></database>", "t.xml:3: stripe: stride 0 with length 2"},
		{"register narrower than the domain unit", head + "<domain name=\"D\" width=\"32\">\n<reg16 name=\"X\" offset=\"0\"/>\n</domain></database>", "t.xml:3: register X: 16 bits is narrower"},
		{"bad domain width", head + "<domain name=\"D\" width=\"12\"/>\n</database>", "t.xml:2: <domain D>: width 12"},
		{"domain size conflict", head + "<domain name=\"D\" size=\"4\"/>\n<domain name=\"D\" size=\"8\"/>\n</database>", "t.xml:3: domain D: size 0x8 differs"},
		{"bad access", head + "<domain name=\"D\">\n<reg32 name=\"X\" offset=\"0\" access=\"x\"/>\n</domain></database>", "t.xml:3: <reg32 X>: access \"x\""},
		{"recursive group", head + "<group name=\"g\"><use-group name=\"g\"/></group>\n<domain name=\"D\"><use-group name=\"g\"/></domain>\n</database>", "nesting deeper than"},
		{"array overflows", head + "<domain name=\"D\">\n<reg32 name=\"X\" offset=\"0xffffffffffffff00\" length=\"1000\"/>\n</domain></database>", "t.xml:3: register X: array extends beyond 2^64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{"t.xml": {Data: []byte(tt.xml)}}
			_, err := Load(fsys, "t.xml")
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
		})
	}
}

func TestXMLImportOnce(t *testing.T) {
	fsys := fstest.MapFS{
		"a.xml": {Data: []byte(`<database><import file="b.xml"/><import file="c.xml"/><domain name="D"><reg32 name="X" offset="0" type="e"/></domain></database>`)},
		"b.xml": {Data: []byte(`<database><import file="c.xml"/></database>`)},
		"c.xml": {Data: []byte(`<database><enum name="e"><value value="1" name="ONE"/></enum></database>`)},
	}
	db, err := Load(fsys, "a.xml")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(db.Enums["e"].Values); n != 1 {
		t.Errorf("enum e has %d values, want 1 (c.xml imported twice?)", n)
	}
}

func TestLargeArrayIsSolved(t *testing.T) {
	// too many instances to expand: looked up arithmetically
	x := `<database><domain name="D"><array name="A" offset="0x100000" stride="0x10" length="0x1000000"><reg32 offset="4" name="R"/></array></domain></database>`
	db, err := LoadBytes("big.xml", []byte(x))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := db.Lookup("D", 0x100000+0x10*0x123456+4, 32)
	if !ok || m.Name() != "A[1193046].R" {
		t.Fatalf("got %q %v, want A[1193046].R", m.Name(), ok)
	}
	if _, ok := db.Lookup("D", 0x100000+0x10*0x123456+8, 32); ok {
		t.Error("found a register in the gap of a large array")
	}
}

// TestEnvytoolsRnndb loads a checkout of envytools' rnndb when
// IOTAP_RNNDB points to its root.xml (the files are not shipped with
// iotap); it checks a few well-known NVIDIA registers.
func TestEnvytoolsRnndb(t *testing.T) {
	root := os.Getenv("IOTAP_RNNDB")
	if root == "" {
		t.Skip("set IOTAP_RNNDB=/path/to/envytools/rnndb/root.xml to load the real database")
	}
	db, err := LoadFile(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		variant string
		off     uint64
		want    string
	}{
		{"", 0x0, "PMC.ID"},
		{"", 0x88000, "PPCI.PCIID"},
		{"GF100", 0x1700, "PBUS.HOST_MEM.PMEM"},
	} {
		v, err := db.WithVariant(tt.variant)
		if err != nil {
			t.Fatal(err)
		}
		m, ok := v.Lookup("NV_MMIO", tt.off, 32)
		if !ok || m.Name() != tt.want {
			t.Errorf("%s %#x: %q, want %q", tt.variant, tt.off, m.Name(), tt.want)
		}
	}
}
