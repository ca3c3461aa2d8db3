package regdb

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestYAMLFeatures(t *testing.T) {
	db, err := LoadFile("testdata/native.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		variant string
		domain  string
		off     uint64
		width   uint
		value   uint64
		want    string
		index   []uint64
	}{
		{"offset shorthand", "", "DEV", 0x0, 32, 0x12, "ID = 0x00000012", nil},
		{"fields: single bit, enum type, inline values", "", "DEV", 0x4, 32, 0xf9, "CTRL = 0x000000f9 {EN, SPEED=S1000, MODE=ALL}", nil},
		{"inline value 0 is named", "", "DEV", 0x4, 32, 0x100, "CTRL = 0x00000100 {SPEED=S10, MODE=IDLE, OLD}", nil},
		{"field variant excluded", "R3", "DEV", 0x4, 32, 0x100, "CTRL = 0x00000100 {SPEED=S10, MODE=IDLE, unk=0x100}", nil},
		{"bitset: H:L, L-H, a..b, shr", "", "DEV", 0x8, 32, 0x1d7, "ICR = 0x000001d7 {A, B=0x3, C=ONE, D=28}", nil},
		{"bitset field with variants, none selected", "", "DEV", 0xc, 32, 0x200, "IMC = 0x00000200 {NEW}", nil},
		{"bitset field with variants, excluded", "R1", "DEV", 0xc, 32, 0x200, "IMC = 0x00000200 {unk=0x200}", nil},
		{"width 8", "", "DEV", 0x10, 8, 0xab, "B8 = 0xab", nil},
		{"width 16 int", "", "DEV", 0x12, 16, 0x8000, "H16 = 0x8000 (-32768)", nil},
		{"width 64 uint", "", "DEV", 0x18, 64, 1 << 40, "Q64 = 0x0000010000000000 (1099511627776)", nil},
		{"register values", "", "DEV", 0x20, 32, 1, "STATE = 0x00000001 (ON)", nil},
		{"register shr", "", "DEV", 0x24, 32, 2, "SCALE = 0x00000002 (512)", nil},
		{"length, default stride", "", "DEV", 0x11c, 32, 0, "TABLE[7] = 0x00000000", []uint64{7}},
		{"length and stride", "", "DEV", 0x218, 32, 0, "PAIR[3] = 0x00000000", []uint64{3}},
		{"stride gap", "", "DEV", 0x21c, 32, 0, "", nil},
		{"register variants, none selected", "", "DEV", 0x28, 32, 0, "R3ONLY = 0x00000000", nil},
		{"register variants, excluded", "rev=R2", "DEV", 0x28, 32, 0, "", nil},
		{"array", "", "DEV", 0x448, 32, 3, "Q[1].HEAD = 0x00000003 (3)", []uint64{1}},
		{"stripe", "", "DEV", 0x804, 32, 0, "S[1].X = 0x00000000", []uint64{1}},
		{"32-bit units", "", "OTHER", 1, 32, 0, "W1 = 0x00000000", nil},
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
					t.Fatalf("Lookup(%#x) = %s, want nothing", tt.off, m.Name())
				}
				return
			}
			if !ok {
				t.Fatalf("Lookup(%#x): not found, want %s", tt.off, tt.want)
			}
			if got := m.Format(tt.value); got != tt.want {
				t.Errorf("Format = %q, want %q", got, tt.want)
			}
			if got := m.Indices(); !slices.Equal(got, tt.index) {
				t.Errorf("Indices = %v, want %v", got, tt.index)
			}
		})
	}
	m, _ := db.Lookup("DEV", 0x4, 32)
	if m.Register.Doc != "control" || m.Register.Pos.Line != 20 {
		t.Errorf("CTRL doc %q line %d, want control on line 20", m.Register.Doc, m.Register.Pos.Line)
	}
	m, _ = db.Lookup("DEV", 0x8, 32)
	if m.Register.Access != ReadOnly {
		t.Errorf("ICR access %v, want r", m.Register.Access)
	}
	if d, ok := db.ForPCI(PCIID{0x1234, 0x5679}, 0); !ok || d.Name != "DEV" {
		t.Errorf("ForPCI(1234:5679, 0) = %v %v, want DEV", d, ok)
	}
	if d, ok := db.ForPCI(PCIID{0x1234, 0x5678}, 2); !ok || d.Name != "OTHER" {
		t.Errorf("ForPCI(1234:5678, 2) = %v %v, want OTHER", d, ok)
	}
	if _, ok := db.ForPCI(PCIID{0x1234, 0x5679}, 1); ok {
		t.Error("ForPCI(1234:5679, 1) found a domain")
	}
}

func TestYAMLErrors(t *testing.T) {
	dom := "domains:\n  D:\n    registers:\n"
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"syntax", "domains:\n  D: [\n", "t.yaml:2: did not find expected node content"},
		{"unknown top key", "foo: 1\n", "t.yaml:1: unknown key \"foo\""},
		{"not a mapping", "- 1\n", "t.yaml:1: database: want a mapping"},
		{"empty", "", "t.yaml:1: empty database"},
		{"unknown register key", dom + "      X: {offset: 0, foo: 1}\n", "t.yaml:4: register X: unknown key \"foo\""},
		{"missing offset", dom + "      X: {width: 8}\n", "t.yaml:4: register X: offset missing"},
		{"bad offset", dom + "      X: zz\n", "t.yaml:4: register X: \"zz\" is not a number"},
		{"bad width", dom + "      X: {offset: 0, width: 12}\n", "t.yaml:4: register X: width: want 8, 16, 32 or 64"},
		{"duplicate register", dom + "      X: 0\n      X: 4\n", "t.yaml:5: domain D: registers: \"X\" defined twice (first on line 4)"},
		{"bad bits", dom + "      X: {offset: 0, fields: {A: \"9:x\"}}\n", "t.yaml:4: register X: field A: bits \"9:x\""},
		{"bits beyond width", dom + "      X: {offset: 0, width: 8, fields: {A: 9}}\n", "t.yaml:4: bitfield A: bits 9..9 do not fit 8 bits"},
		{"field without bits", dom + "      X: {offset: 0, fields: {A: {type: uint}}}\n", "t.yaml:4: register X: field A: bits missing"},
		{"unknown type", dom + "      X: {offset: 0, type: nope}\n", "t.yaml:4: unknown type \"nope\""},
		{"bad access", dom + "      X: {offset: 0, access: x}\n", "t.yaml:4: register X: access: \"x\""},
		{"array without stride", dom + "      A: {offset: 0, length: 2, registers: {X: 0}}\n", "t.yaml:4: array A: length 2 needs a stride"},
		{"array with fields", dom + "      A: {offset: 0, fields: {B: 0}, registers: {X: 0}}\n", "t.yaml:4: A: an array (with registers:) cannot have fields"},
		{"bad pci", "domains:\n  D:\n    pci: [\"8086-100e\"]\n", "t.yaml:3: domain D: pci: \"8086-100e\""},
		{"bad enum value", "enums:\n  e: {x: A}\n", "t.yaml:2: enum e: \"x\" is not a number"},
		{"unknown variant", "enums:\n  v: [A, B]\n" + dom + "      X: {offset: 0, variants: \"A-C\"}\n", "t.yaml:6: variants \"A-C\": unknown variant \"C\""},
		{"alias bomb is bounded", "a: &a [1,1,1,1,1,1,1,1,1,1]\n", "t.yaml:1: unknown key \"a\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBytes("t.yaml", []byte(tt.yaml))
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

func TestParsePCIID(t *testing.T) {
	for _, tt := range []struct {
		in string
		id PCIID
		ok bool
	}{
		{"8086:100e", PCIID{0x8086, 0x100e}, true},
		{"8086:100E", PCIID{0x8086, 0x100e}, true},
		{"8086100e", PCIID{}, false},
		{"8086:1000e", PCIID{}, false},
		{"x:1", PCIID{}, false},
	} {
		id, ok := ParsePCIID(tt.in)
		if id != tt.id || ok != tt.ok {
			t.Errorf("ParsePCIID(%q) = %v %v, want %v %v", tt.in, id, ok, tt.id, tt.ok)
		}
	}
	if s := (PCIID{0x8086, 0x100e}).String(); s != "8086:100e" {
		t.Errorf("String = %q", s)
	}
}
