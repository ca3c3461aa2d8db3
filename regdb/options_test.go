package regdb

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/iotap/iotap/mmiotrace"
)

// A device the shipped databases do not know (1234:5678) is named through
// --db e1000 and --bar VENDOR:DEVICE/0=E1000: STATUS is at 0x0008 and CTRL
// at 0x0000 of the 8254x's BAR0 (Intel's 8254x manual, table 13-2).
func TestNewNamerFromBinds(t *testing.T) {
	log := "PCIDEV 0020 12345678 a fe000000 0 0 0 0 0 0 20000 0 0 0 0 0 0 x\n" +
		"MAP 1.0 1 0xfe000000 0xffffc90000080000 0x20000 0x0 0\n" +
		"R 4 1.1 1 0xfe000008 0x80080783 0x0 0\n" +
		"W 4 1.2 1 0xfe000000 0x4000240 0x0 0\n"
	name := func(o NamerOptions) string {
		n, err := NewNamerFrom(o)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := n.NameLog(context.Background(), mmiotrace.NewReader(strings.NewReader(log)), &out, false); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	got := name(NamerOptions{DBs: []string{"e1000"}, BARs: []string{"1234:5678/0=E1000"}})
	if !strings.Contains(got, "0x80080783 0x0 0 ; STATUS = ") || !strings.Contains(got, "0x4000240 0x0 0 ; CTRL = ") {
		t.Errorf("bound:\n%s", got)
	}
	if got := name(NamerOptions{}); strings.Contains(got, " ; ") {
		t.Errorf("without a binding the device has no database, got:\n%s", got)
	}
}

func TestNewNamerFromErrors(t *testing.T) {
	for _, c := range []struct {
		o    NamerOptions
		want string
	}{
		{NamerOptions{DBs: []string{"nosuchdb"}}, `--db "nosuchdb": no such file and not a shipped database (e1000)`},
		{NamerOptions{Variant: "X9"}, `--variant "X9": no shipped database defines it (give the database with --db)`},
		{NamerOptions{DBs: []string{"e1000"}, Variant: "X9"}, `--variant "X9": no database defines it`},
		{NamerOptions{BARs: []string{"0000:00:03.0=E1000"}}, `--bar "0000:00:03.0=E1000": want PCIADDR/N=DOMAIN`},
		{NamerOptions{BARs: []string{"0000:00:03.0/0=NOPE"}}, `--bar "0000:00:03.0/0=NOPE": no database has a domain "NOPE"`},
	} {
		_, err := NewNamerFrom(c.o)
		if !errors.Is(err, ErrOption) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	// A database file that does not parse is not an option error.
	if _, err := NewNamerFrom(NamerOptions{DBs: []string{"testdata/rnndb"}}); err == nil || errors.Is(err, ErrOption) {
		t.Errorf("a directory as database: %v", err)
	}
}
