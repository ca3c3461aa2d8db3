package userevents

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLabPerfRing reads events back through perf rings: attaching flips
// the enable bit (status "perf"), every event written (through writev and
// through the pwrite fast path) comes back decoded, detaching clears the
// bit; then a one-page ring overflows and read + lost = written.
func TestLabPerfRing(t *testing.T) {
	f, p := labProducer(t)
	ev, err := p.Register("iotap_lab_perf u32 a; __rel_loc char[] s")
	if err != nil {
		t.Fatal(err)
	}
	ints, err := p.Register("iotap_lab_perf2 u64 v")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Enabled() || ints.Enabled() {
		t.Fatal("enabled before perf attached")
	}
	r, err := NewPerfReader(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"iotap_lab_perf", "iotap_lab_perf2"} {
		if _, err := r.Add(System, n); err != nil {
			r.Close()
			t.Fatal(err)
		}
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	if !waitEnabled(ev, true) || !waitEnabled(ints, true) {
		t.Fatal("perf attached, enable bit not set")
	}
	st, _ := f.ReadFile("user_events_status")
	if !strings.Contains(string(st), "perf") {
		t.Errorf("status does not show perf:\n%s", st)
	}
	const n = 5000
	seen := make([]bool, n)
	seen2 := make([]bool, n)
	var bad []string
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- r.Run(ctx, func(rec *Recorded) error {
			switch rec.Name {
			case "iotap_lab_perf":
				a := rec.Values[0].Uint
				if a >= n || seen[a] || string(rec.Values[1].Bytes) != "s"+strconv.Itoa(int(a)) || rec.PID <= 0 || rec.TS == 0 {
					bad = append(bad, fmt.Sprintf("%v pid %d ts %d", rec.Values, rec.PID, rec.TS))
					return nil
				}
				seen[a] = true
			case "iotap_lab_perf2":
				v := rec.Values[0].Uint
				if v%7 != 0 || v/7 >= n || seen2[v/7] {
					bad = append(bad, fmt.Sprintf("%v", rec.Values))
					return nil
				}
				seen2[v/7] = true
			default:
				bad = append(bad, rec.Name)
			}
			return nil
		})
	}()
	for i := 0; i < n; i++ {
		if err := ev.Write(uint32(i), "s"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
		if err := ints.Write(uint64(7 * i)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Fatalf("%d bad records, first: %s", len(bad), bad[0])
	}
	missing := 0
	for i := range seen {
		if !seen[i] || !seen2[i] {
			missing++
		}
	}
	s := r.Stats()
	if missing != 0 || s.Lost != 0 || s.Events != 2*n {
		t.Fatalf("missing %d, stats %+v", missing, s)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if !waitEnabled(ev, false) {
		t.Fatal("perf detached, enable bit still set")
	}

	// Overflow: a one-page ring, nobody reading while 2000 events are written.
	r, err = NewPerfReader(f, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Add(System, "iotap_lab_perf2"); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	waitEnabled(ints, true)
	const m = 2000
	for i := 0; i < m; i++ {
		if err := ints.Write(uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Poll(func(*Recorded) error { return nil }); err != nil {
		t.Fatal(err)
	}
	s = r.Stats()
	t.Logf("one-page ring: %+v", s)
	if s.Lost == 0 || s.Events+s.Lost != m {
		t.Fatalf("read %d + lost %d != written %d", s.Events, s.Lost, m)
	}
}
