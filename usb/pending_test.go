package usb

import (
	"math/rand"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

// TestPendingTableMatchesMap runs random puts, lookups and removes on the
// pending table and on a Go map (the oracle) and compares every answer and,
// at the end, the whole contents. Keys are drawn from a small set so that
// probe runs collide, wrap around the table and shift back on removal.
func TestPendingTableMatchesMap(t *testing.T) {
	for _, nkeys := range []int{3, 40, 300, 5000} {
		rng := rand.New(rand.NewSource(int64(nkeys)))
		keys := make([]Key, nkeys)
		for i := range keys {
			keys[i] = Key{ID: 0xffff8880_00000000 | uint64(rng.Intn(64))<<6, Bus: uint16(rng.Intn(3)),
				Device: uint8(rng.Intn(4)), Endpoint: uint8(rng.Intn(3)) | uint8(rng.Intn(2))<<7,
				Transfer: usbmon.TransferType(rng.Intn(4))}
		}
		var tab pendingTable
		want := map[Key]Submission{}
		for op := 0; op < 200000; op++ {
			k := keys[rng.Intn(nkeys)]
			switch rng.Intn(3) {
			case 0:
				s := Submission{Micros: int64(op), Seq: uint64(op), Length: uint32(rng.Intn(100))}
				tab.put(k, s)
				want[k] = s
			case 1:
				got, ok := tab.get(k)
				w, wok := want[k]
				if ok != wok || got != w {
					t.Fatalf("keys %d op %d get %+v: %+v %v, map %+v %v", nkeys, op, k, got, ok, w, wok)
				}
			case 2:
				got, ok := tab.remove(k)
				w, wok := want[k]
				delete(want, k)
				if ok != wok || got != w {
					t.Fatalf("keys %d op %d remove %+v: %+v %v, map %+v %v", nkeys, op, k, got, ok, w, wok)
				}
			}
			if tab.len() != len(want) {
				t.Fatalf("keys %d op %d: len %d, map %d", nkeys, op, tab.len(), len(want))
			}
		}
		n := 0
		tab.each(func(k Key, s Submission) {
			n++
			if w, ok := want[k]; !ok || w != s {
				t.Fatalf("keys %d: each gave %+v %+v, map %+v %v", nkeys, k, s, w, ok)
			}
		})
		if n != len(want) {
			t.Fatalf("keys %d: each saw %d entries, map has %d", nkeys, n, len(want))
		}
	}
}
