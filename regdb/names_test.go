package regdb

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/iotap/iotap/mmiotrace"
)

func TestParseBARRule(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    BARRule
		wantErr string
	}{
		{in: "0000:00:03.0/0=E1000", want: BARRule{Addr: mmiotrace.PCIAddr{Bus: 0, Dev: 3, Fn: 0}, Index: 0, Domain: "E1000"}},
		{in: "0000:01:00.1/2=NV_MMIO", want: BARRule{Addr: mmiotrace.PCIAddr{Bus: 1, Dev: 0, Fn: 1}, Index: 2, Domain: "NV_MMIO"}},
		{in: "8086:100e/0=E1000", want: BARRule{ByID: true, ID: PCIID{Vendor: 0x8086, Device: 0x100e}, Domain: "E1000"}},
		{in: "0000:00:03.0/0", wantErr: "want PCIADDR/N=DOMAIN"},
		{in: "0000:00:03.0=E1000", wantErr: "want PCIADDR/N=DOMAIN"},
		{in: "0000:00:03.0/0=", wantErr: "want PCIADDR/N=DOMAIN"},
		{in: "0000:00:03.0/7=E1000", wantErr: "BAR number must be 0..6"},
		{in: "0000:00:03.0/x=E1000", wantErr: "BAR number must be 0..6"},
		{in: "nonsense/0=E1000", wantErr: "nonsense"},
	} {
		got, err := ParseBARRule(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		tc.want.Text = tc.in
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

// namesLog: an e1000 (8086:100e, BAR0 at 0xfebc0000, 128 KiB) and a
// device without a database (1b36:000d, BAR0 at 0xfebe0000, 16 KiB).
const namesLog = `VERSION 20070824
PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000
PCIDEV 0020 1b36000d b febe0004 0 0 0 0 0 0 4000 0 0 0 0 0 0 xhci_hcd
MAP 12.222895 1 0xfebc0000 0xff47c24040380000 0x20000 0x0 0
MAP 12.222896 2 0xfebe0000 0xff47c24040400000 0x4000 0x0 0
R 4 12.225226 1 0xfebc0008 0x80080783 0x0 0
W 4 12.228179 1 0xfebc00d8 0xffffffff 0x0 0
W 4 12.228180 1 0xfebc00d8 0xffffffff 0x0 0
R 4 12.228438 1 0xfebc1ffc 0x0 0x0 0
R 4 12.228439 2 0xfebe0000 0x1 0x0 0
R 4 12.228440 3 0x00001000 0x1 0x0 0
`

// TestNamer names the accesses of a small log the way the 8254x manual
// does (STATUS at 0x0008, IMC at 0x00d8; 0x1ffc is reserved) and counts
// what it cannot name, by cause.
func TestNamer(t *testing.T) {
	rd := mmiotrace.NewReader(strings.NewReader(namesLog))
	defer rd.Close()
	bars := mmiotrace.NewBARMap()
	rules := []BARRule{{ByID: true, ID: PCIID{Vendor: 0x1234, Device: 0x5678}, Domain: "E1000", Text: "1234:5678/0=E1000"}}
	n := NewNamer(Binder{Rules: rules})
	var got []string
	var rec mmiotrace.Record
	for {
		err := rd.ReadInto(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		bars.Observe(&rec)
		if rec.Kind != mmiotrace.KindRead && rec.Kind != mmiotrace.KindWrite {
			continue
		}
		a := n.Resolve(bars, &rec)
		got = append(got, string(n.AppendNamed(nil, &rec, a)))
		j := NewNameRecord(rd.Line(), &rec, a)
		if a.Named != (j.Register != nil) || (a.Loc.BAR != nil) != (j.BAR != nil) {
			t.Errorf("line %d: JSON record %+v disagrees with %+v", rd.Line(), j, a)
		}
	}
	wantPrefix := []string{" ; STATUS = ", " ; IMC = ", " ; IMC = ", " ; unnamed E1000+0x1ffc", "", ""}
	if len(got) != len(wantPrefix) {
		t.Fatalf("%d accesses: %q", len(got), got)
	}
	for i, w := range wantPrefix {
		if !strings.HasPrefix(got[i], w) || (w == "" && got[i] != "") {
			t.Errorf("access %d: %q, want %q...", i, got[i], w)
		}
	}
	if got[1] != got[2] {
		t.Errorf("the same write named twice differently (cache): %q, %q", got[1], got[2])
	}
	if n.Accesses != 6 || n.Named != 3 || n.Unnamed != 1 || n.NoDB != 1 || n.Outside != 1 {
		t.Errorf("counts %+v", n)
	}
	var sum bytes.Buffer
	n.WriteSummary(&sum)
	for _, want := range []string{
		"6 accesses: 3 named, 1 unnamed, 1 in BARs without a database, 1 outside any PCI BAR\n",
		"unnamed offsets: E1000+0x1ffc (1)\n",
		"1 accesses to 0000:00:04.0 BAR0 (1b36:000d) have no database: use --db and --bar 0000:00:04.0/0=DOMAIN\n",
		"1 accesses lie outside every PCI BAR",
		"--bar 1234:5678/0=E1000 matched no access\n",
	} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
	}
}

func TestNamerDecodeCache(t *testing.T) {
	n := NewNamer(Binder{})
	db, err := Builtin("e1000")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := db.Lookup("E1000", 0x0, 32)
	for i := 0; i < maxDecodeCache+10; i++ {
		v := uint64(i) * 0x10001
		for rep := 0; rep < 2; rep++ { // the second time from the cache
			if got, want := string(n.format(nil, m, v)), m.Format(v); got != want {
				t.Fatalf("value %#x: cached %q, want %q", v, got, want)
			}
		}
		if len(n.cache) > maxDecodeCache {
			t.Fatalf("cache holds %d entries, limit %d", len(n.cache), maxDecodeCache)
		}
	}
	// another register instance with the same value is not confused with CTRL
	m2, _ := db.Lookup("E1000", 0x5404, 32)
	if got := string(n.format(nil, m2, 0x10001)); !strings.HasPrefix(got, "RAH[0] = ") {
		t.Errorf("cache mixed registers: %q", got)
	}
}
