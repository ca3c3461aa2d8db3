package regdb_test

import (
	"fmt"

	"github.com/iotap/iotap/regdb"
)

func Example() {
	db, err := regdb.Builtin("e1000")
	if err != nil {
		panic(err)
	}
	// a 32-bit write of 0xffffffff at offset 0xd8 of the e1000 BAR0
	m, ok := db.Lookup("E1000", 0xd8, 32)
	fmt.Println(ok, m.Name(), m.Register.Access)
	m, _ = db.Lookup("E1000", 0x0, 32)
	fmt.Println(m.Format(0x00000241))
	// Output:
	// true IMC w
	// CTRL = 0x00000241 {FD, SLU, SPEED=1000}
}

func ExampleLoadBytes() {
	src := `
enums:
  mode: {0: OFF, 1: ON}
domains:
  DEV:
    registers:
      CFG:
        offset: 0x10
        fields:
          EN: 0
          MODE: {bits: "5:4", type: mode}
          COUNT: {bits: "15:8", type: uint}
      FIFO: {offset: 0x100, length: 8}
`
	db, err := regdb.LoadBytes("dev.yaml", []byte(src))
	if err != nil {
		panic(err)
	}
	m, _ := db.Lookup("DEV", 0x10, 32)
	for _, f := range m.Decode(0x0511) {
		fmt.Println(f.Name, f.Value, f.Enum != "", f.String())
	}
	m, _ = db.Lookup("DEV", 0x10c, 32)
	fmt.Println(m.Name(), m.Indices())
	// Output:
	// EN 1 false EN
	// MODE 1 true MODE=ON
	// COUNT 5 false COUNT=5
	// FIFO[3] [3]
}

func ExampleDB_WithVariant() {
	src := `<database>
<enum name="chip"><value name="A"/><value name="B"/></enum>
<domain name="D">
  <reg32 offset="0" name="OLD" variants="A"/>
  <reg32 offset="0" name="NEW" variants="B-"/>
</domain>
</database>`
	db, _ := regdb.LoadBytes("d.xml", []byte(src))
	for _, v := range []string{"A", "chip=B"} {
		view, _ := db.WithVariant(v)
		m, _ := view.Lookup("D", 0, 32)
		fmt.Println(v, m.Name())
	}
	// Output:
	// A OLD
	// chip=B NEW
}
