package regdb_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/iotap/iotap/mmiotrace"
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

// Name the accesses of an mmiotrace log as 'iotap mmio names' does: the
// shipped e1000 database binds the BAR by its PCI id.
func ExampleNamer() {
	log := `PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000
MAP 12.222895 1 0xfebc0000 0xff47c24040380000 0x20000 0x0 0
W 4 12.228179 1 0xfebc00d8 0xffffffff 0x0 0
`
	rd := mmiotrace.NewReader(strings.NewReader(log))
	defer rd.Close()
	bars := mmiotrace.NewBARMap()
	n := regdb.NewNamer(regdb.Binder{})
	for {
		rec, err := rd.Read()
		if err != nil {
			break
		}
		bars.Observe(rec)
		if rec.Kind == mmiotrace.KindWrite {
			a := n.Resolve(bars, rec)
			fmt.Printf("%s\n", n.AppendNamed([]byte(rec.Kind.String()), rec, a))
		}
	}
	n.WriteSummary(os.Stdout)
	// Output:
	// W ; IMC = 0xffffffff {TXDW, TXQE, LSC, RXSEQ, RXDMT0, RXO, RXT0, MDAC, RXCFG, GPI_EN0, GPI_EN1, GPI_EN2, GPI_EN3, TXD_LOW, SRPD, unk=0xfffe0120}
	// mmio names: 1 accesses: 1 named, 0 unnamed, 0 in BARs without a database, 0 outside any PCI BAR
}

// Name every access of a log as 'iotap mmio names' prints it, binding the
// BAR to the shipped e1000 database by its PCI id.
func ExampleNamer_NameLog() {
	log := `PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000
MAP 12.222895 1 0xfebc0000 0xff47c24040380000 0x20000 0x0 0
R 4 12.225226 1 0xfebc0008 0x80080783 0x0 0
`
	n := regdb.NewNamer(regdb.Binder{})
	if err := n.NameLog(context.Background(), mmiotrace.NewReader(strings.NewReader(log)), os.Stdout, false); err != nil {
		fmt.Println(err)
	}
	n.WriteSummary(os.Stdout)
	// Output:
	// PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000
	// MAP 12.222895 1 0xfebc0000 0xff47c24040380000 0x20000 0x0 0
	// R 4 12.225226 1 0xfebc0008 0x80080783 0x0 0 ; STATUS = 0x80080783 {FD, LU, SPEED=1000, ASDV=1000, MTXCKOK, GIO_MASTER_EN, unk=0x80000000}
	// mmio names: 1 accesses: 1 named, 0 unnamed, 0 in BARs without a database, 0 outside any PCI BAR
}

// Name the hot registers of a log's statistics ('iotap mmio stats') as
// 'mmio names' and the timeline name their accesses.
func ExampleBinder_RegisterNames() {
	log := `PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000
MAP 12.222895 1 0xfebc0000 0xff47c24040380000 0x20000 0x0 0
R 4 12.225226 1 0xfebc0008 0x80080783 0x0 0
W 4 12.228179 1 0xfebc00d8 0xffffffff 0x0 0
`
	st, err := mmiotrace.Analyze(strings.NewReader(log), mmiotrace.StatsOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	name := new(regdb.Binder).RegisterNames(st) // the shipped databases
	for _, r := range st.Regs {
		fmt.Println(r.Key, name(r.Key))
	}
	// Output:
	// 0000:00:03.0/0+0x8 STATUS
	// 0000:00:03.0/0+0xd8 IMC
}

// NewNamerFrom is 'iotap mmio names --db e1000 --bar 1234:5678/0=E1000':
// a device the shipped databases do not know, named as an 8254x.
func ExampleNewNamerFrom() {
	log := `PCIDEV 0020 12345678 a fe000000 0 0 0 0 0 0 20000 0 0 0 0 0 0 x
MAP 1.0 1 0xfe000000 0xffffc90000080000 0x20000 0x0 0
R 4 1.1 1 0xfe000008 0x80080783 0x0 0
`
	n, err := regdb.NewNamerFrom(regdb.NamerOptions{DBs: []string{"e1000"}, BARs: []string{"1234:5678/0=E1000"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := n.NameLog(context.Background(), mmiotrace.NewReader(strings.NewReader(log)), os.Stdout, false); err != nil {
		fmt.Println(err)
	}
	_, err = regdb.NewNamerFrom(regdb.NamerOptions{BARs: []string{"0000:00:03.0/0=NOPE"}})
	fmt.Println(err, errors.Is(err, regdb.ErrOption))
	// Output:
	// PCIDEV 0020 12345678 a fe000000 0 0 0 0 0 0 20000 0 0 0 0 0 0 x
	// MAP 1.0 1 0xfe000000 0xffffc90000080000 0x20000 0x0 0
	// R 4 1.1 1 0xfe000008 0x80080783 0x0 0 ; STATUS = 0x80080783 {FD, LU, SPEED=1000, ASDV=1000, MTXCKOK, GIO_MASTER_EN, unk=0x80000000}
	// --bar "0000:00:03.0/0=NOPE": no database has a domain "NOPE" true
}

// NameInput is 'iotap mmio names' of a log file: the log is read (plain
// or compressed) and named; what it lost is returned.
func ExampleNamer_NameInput() {
	log := `PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000
MAP 12.222895 1 0xfebc0000 0xff47c24040380000 0x20000 0x0 0
R 4 12.225226 1 0xfebc0008 0x80080783 0x0 0
MARK 12.3 Lost 2 events.
`
	n := regdb.NewNamer(regdb.Binder{})
	loss, err := n.NameInput(context.Background(), strings.NewReader(log), io.Discard, regdb.LogInput{File: "e1000.log", KeepGoing: true}, false)
	fmt.Println(n.Named, "named;", loss, err)
	// Output:
	// 1 named; [the log records 2 lost events (kernel "Lost N events." marks): the trace is incomplete] <nil>
}
