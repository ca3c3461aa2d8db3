package timeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/ksym"
)

// With Options.Symbols, each MMIO access with a PC carries "func".
func TestMMIOSymbols(t *testing.T) {
	log := `VERSION 20070824
PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000
MAP 8.286086 1 0xfebc0000 0xff508fd9c0220000 0x20000 0x0 0
R 4 8.288891 1 0xfebc0008 0x80080783 0xffffffffc001041c 0
W 4 8.294406 1 0xfebc00d8 0xffffffff 0x0 0
`
	p := filepath.Join(t.TempDir(), "e.log")
	os.WriteFile(p, []byte(log), 0o600)
	tab, err := ksym.Load(strings.NewReader("ffffffffc0010400 t e1000_reset_hw\t[e1000]\n"), strings.NewReader("e1000 8192 0 - Live 0xffffffffc0010000\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := Export(context.Background(), &out, []string{p}, Options{Symbols: tab}); err != nil {
		t.Fatal(err)
	}
	tr := decodeTrace(t, out.Bytes())
	var got []any
	for _, e := range tr.events {
		if e.cat == "mmio" && e.args["value"] != nil {
			got = append(got, e.args["func"])
		}
	}
	if len(got) != 2 || got[0] != "e1000_reset_hw+0x1c [e1000]" || got[1] != nil {
		t.Errorf("func args: %v", got)
	}
}
