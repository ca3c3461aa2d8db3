package regdb_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/iotap/iotap/regdb"
)

// TestOpen checks the --db lookup: a file wins over a shipped name, a
// shipped name loads the shipped database, anything else is ErrNotFound
// naming the shipped databases.
func TestOpen(t *testing.T) {
	db, err := regdb.Open("e1000")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := db.ForPCI(regdb.PCIID{Vendor: 0x8086, Device: 0x100e}, 0); !ok {
		t.Error("the shipped e1000 database does not describe BAR 0 of 8086:100e")
	}
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/native.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "e1000") // a file named like a shipped database
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile, err := regdb.Open(file)
	want, err2 := regdb.LoadFile("testdata/native.yaml")
	if err != nil || err2 != nil || len(fromFile.Domains) != len(want.Domains) {
		t.Fatalf("Open(file) = %v, %v; LoadFile %v", fromFile, err, err2)
	}
	_, err = regdb.Open("no-such-db")
	if !errors.Is(err, regdb.ErrNotFound) || err.Error() != `"no-such-db": no such file and not a shipped database (e1000)` {
		t.Fatalf("Open(unknown) = %v", err)
	}
}

func ExampleOpen() {
	db, err := regdb.Open("e1000") // or a file: rnndb XML or YAML
	if err != nil {
		panic(err)
	}
	_, dom, ok := regdb.BuiltinForPCI(regdb.PCIID{Vendor: 0x8086, Device: 0x100e}, 0)
	fmt.Println(len(db.Domains) > 0, ok, dom.Name)
	// Output:
	// true true E1000
}
