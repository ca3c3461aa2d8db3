package progress

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// clock is a fake clock the test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock               { return &clock{t: time.Unix(1000, 0)} }
func lines(s string) []string        { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }
func meter(w io.Writer, total int64, term bool, c *clock) *Meter {
	return New(w, "iotap: job", total, Options{Terminal: term, Now: c.now})
}

func TestLine(t *testing.T) {
	for _, tc := range []struct {
		done, total int64
		elapsed     time.Duration
		status      string
		want        string
	}{
		// 100 MB of 400 in 2 s: 50 MB/s, 300 MB left take 6 s.
		{100e6, 400e6, 2 * time.Second, "", "x: 25% 100.0 MB of 400.0 MB, 50.0 MB/s, 6s left"},
		{1500, 0, time.Second, "", "x: 1.5 kB, 1.5 kB/s"},
		{3e9, -1, 3 * time.Second, "trace 2 of 5", "x: 3.0 GB, 1.0 GB/s, trace 2 of 5"},
		{400, 400, time.Second, "", "x: 100% 400 B of 400 B, 400 B/s"},
		// A file that grew while it was read: never over 100%.
		{500, 400, time.Second, "", "x: 100% 500 B of 400 B, 500 B/s"},
		{0, 400, 0, "", "x: 0% 0 B of 400 B, 0 B/s"},
	} {
		if got := Line("x", tc.done, tc.total, tc.elapsed, tc.status); got != tc.want {
			t.Errorf("Line(%d, %d, %v) = %q, want %q", tc.done, tc.total, tc.elapsed, got, tc.want)
		}
	}
}

// Nothing is shown for the first 2 s; then a line at most every 500 ms on
// a terminal, redrawn in place and erased by Done.
func TestTerminal(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	m := meter(&out, 1000, true, c)
	m.Update(100)
	c.add(1900 * time.Millisecond)
	m.Update(200)
	if out.Len() != 0 {
		t.Fatalf("shown before the delay: %q", out.String())
	}
	c.add(100 * time.Millisecond) // 2 s
	m.Update(500)
	c.add(100 * time.Millisecond)
	m.Update(600) // too soon after the last refresh
	c.add(400 * time.Millisecond)
	m.Add(100) // 700 at 2.5 s
	m.Done()
	want := "\riotap: job: 50% 500 B of 1.0 kB, 250 B/s, 2s left\033[K" +
		"\riotap: job: 70% 700 B of 1.0 kB, 280 B/s, 1s left\033[K" +
		"\r\033[K"
	if out.String() != want {
		t.Errorf("got  %q\nwant %q", out.String(), want)
	}
}

// Not on a terminal (--progress 2>log): full lines every 5 s, nothing to
// erase.
func TestNotTerminal(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	m := meter(&out, 0, false, c)
	r := m.Reader(strings.NewReader(strings.Repeat("x", 10000)))
	buf := make([]byte, 1000)
	for i := 0; i < 10; i++ {
		c.add(time.Second)
		if _, err := r.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
	m.Done()
	want := []string{"iotap: job: 2.0 kB, 1.0 kB/s", "iotap: job: 7.0 kB, 1.0 kB/s"}
	if got := lines(out.String()); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Progress: a job reporting its own done and total moves the meter as
// Update does, with the total it gives.
func TestProgress(t *testing.T) {
	var out bytes.Buffer
	c := newClock()
	m := meter(&out, 0, false, c)
	p := m.Progress()
	c.add(3 * time.Second)
	p(1500, 6000)
	if f := m.Fraction(); f != 0.25 {
		t.Errorf("fraction %v after 1500 of 6000", f)
	}
	if got, want := lines(out.String()), []string{"iotap: job: 25% 1.5 kB of 6.0 kB, 500 B/s, 9s left"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEstimate(t *testing.T) {
	c := newClock()
	m := meter(io.Discard, 0, true, c)
	if m.Estimate(100) != 0 {
		t.Error("estimate without a total")
	}
	m.AddTotal(1000)
	m.AddTotal(1000)
	m.Update(500)
	if got := m.Estimate(300); got != 1200 {
		t.Errorf("300 bytes out for 500 of 2000 in: estimate %d, want 1200", got)
	}
	if got := m.Fraction(); got != 0.25 {
		t.Errorf("fraction %v", got)
	}
}

// A nil meter (progress not shown) is a no-op everywhere.
func TestNil(t *testing.T) {
	var m *Meter
	m.Update(1)
	m.Add(1)
	m.AddTotal(1)
	m.SetStatus("x")
	m.Done()
	r := strings.NewReader("abc")
	if m.Reader(r) != io.Reader(r) || m.Estimate(1) != 0 || m.Fraction() != 0 || m.Progress() != nil {
		t.Error("nil meter does something")
	}
}

// ReaderAt shows the furthest byte read: reads behind it do not move the
// meter back.
func TestReaderAt(t *testing.T) {
	data := bytes.Repeat([]byte("x"), 1000)
	m := meter(io.Discard, int64(len(data)), false, newClock())
	r := m.ReaderAt(bytes.NewReader(data))
	buf := make([]byte, 100)
	for _, tc := range []struct {
		off  int64
		want float64
	}{{0, 0.1}, {400, 0.5}, {100, 0.5}, {900, 1}} {
		if _, err := r.ReadAt(buf, tc.off); err != nil {
			t.Fatal(err)
		}
		if got := m.Fraction(); got != tc.want {
			t.Errorf("after ReadAt(%d): %v done, want %v", tc.off, got, tc.want)
		}
	}
	var none *Meter
	if rd := bytes.NewReader(data); none.ReaderAt(rd) != io.ReaderAt(rd) {
		t.Error("a nil meter wraps its ReaderAt")
	}
}
