package userevents

import (
	"context"
	"fmt"
	"testing"
	"time"
)

type fastRec struct {
	A uint8 `userevents:"a"`
	B int16 `userevents:"b"`
	C uint32
	D int64
	E bool
}

// TestLabFastPaths writes integer-only events through Write's and
// Typed.Write's fast paths (no encoder calls) to the real kernel and reads
// every one back decoded from the per-CPU buffers.
func TestLabFastPaths(t *testing.T) {
	f, p := labProducer(t)
	plain, err := p.Register("iotap_lab_fast u8 a; s16 b; u32 c; s64 d")
	if err != nil {
		t.Fatal(err)
	}
	typed, err := RegisterStruct[fastRec](p, "iotap_lab_fast_t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if plain.ints == nil || typed.layout.runs == nil {
		t.Fatal("events not on the fast paths")
	}
	r, err := NewRecorder(f, 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, n := range []string{"iotap_lab_fast", "iotap_lab_fast_t"} {
		if _, err := r.Add(System, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	if !waitEnabled(plain, true) || !waitEnabled(typed.Event, true) {
		t.Fatal("recorder did not enable the events")
	}
	const n = 2000
	val := func(i int) fastRec {
		return fastRec{A: uint8(i), B: int16(-i * 17), C: uint32(i) * 2654435761, D: -int64(i) << 40, E: i%3 == 0}
	}
	for i := 0; i < n; i++ {
		v := val(i)
		if err := plain.Write(v.A, v.B, v.C, v.D); err != nil {
			t.Fatal(err)
		}
		if err := typed.Write(&v); err != nil {
			t.Fatal(err)
		}
	}
	var got [2]int
	var seen [2][n]bool
	var bad []string
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- r.Run(ctx, func(rec *Recorded) error {
			k := 0
			if rec.Name == "iotap_lab_fast_t" {
				k = 1
			}
			vs := rec.Values
			if len(vs) != 4+k {
				bad = append(bad, fmt.Sprintf("%s: %v", rec.Name, vs))
				return nil
			}
			i := int(-vs[3].Int >> 40) // D identifies the write
			if i < 0 || i >= n || seen[k][i] {
				bad = append(bad, fmt.Sprintf("%s: %v: unknown or duplicate", rec.Name, vs))
				return nil
			}
			seen[k][i] = true
			got[k]++
			want := val(i)
			ok := vs[0].Uint == uint64(want.A) && vs[1].Int == int64(want.B) &&
				vs[2].Uint == uint64(want.C) && vs[3].Int == want.D
			if ok && k == 1 {
				ok = (vs[4].Uint == 1) == want.E
			}
			if !ok {
				bad = append(bad, fmt.Sprintf("%s #%d: %v, want %+v", rec.Name, i, vs, want))
			}
			return nil
		})
	}()
	time.Sleep(500 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Fatalf("%d bad records, first: %s", len(bad), bad[0])
	}
	if got[0] != n || got[1] != n || r.Stats().Lost() != 0 {
		t.Fatalf("read %d and %d of %d, lost %d", got[0], got[1], n, r.Stats().Lost())
	}
}
