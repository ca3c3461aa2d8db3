package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Options tune a Meter; the zero value is the defaults.
type Options struct {
	// Delay is how long the job runs before anything is shown (default
	// 2 s).
	Delay time.Duration
	// Every is the refresh period (default 500 ms on a terminal, 5 s
	// otherwise).
	Every time.Duration
	// Terminal redraws one line in place ("\r", erased by Done);
	// otherwise each refresh is a line of its own.
	Terminal bool
	// Now is the clock (default time.Now); tests set it.
	Now func() time.Time
}

// Meter shows the progress of one job. Its methods are safe for
// concurrent use and do nothing on a nil *Meter.
type Meter struct {
	mu     sync.Mutex
	w      io.Writer
	what   string
	total  int64
	done   int64
	status string
	opt    Options
	start  time.Time
	last   time.Time // last refresh
	shown  bool      // a line is on the terminal
}

// New returns a meter of the job what (printed at the start of the line,
// "iotap: timeline") writing to w; total is the job's size in bytes, or
// <= 0 when it is not known (no percentage then).
func New(w io.Writer, what string, total int64, o Options) *Meter {
	if o.Delay <= 0 {
		o.Delay = 2 * time.Second
	}
	if o.Every <= 0 {
		o.Every = 500 * time.Millisecond
		if !o.Terminal {
			o.Every = 5 * time.Second
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	m := &Meter{w: w, what: what, total: total, opt: o}
	m.start = o.Now()
	return m
}

// AddTotal adds n bytes to the job's size (another input).
func (m *Meter) AddTotal(n int64) {
	if m == nil || n <= 0 {
		return
	}
	m.mu.Lock()
	if m.total < 0 {
		m.total = 0
	}
	m.total += n
	m.mu.Unlock()
}

// SetStatus sets a text shown after the numbers ("trace 3 of 12: x.log").
func (m *Meter) SetStatus(s string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.status = s
	m.mu.Unlock()
	m.Update(-1)
}

// Update records that done bytes of the job are done (done < 0 keeps the
// count) and refreshes the line when it is time to.
func (m *Meter) Update(done int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if done >= 0 {
		m.done = done
	}
	m.refresh(false)
}

// Add records n more bytes done.
func (m *Meter) Add(n int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done += n
	m.refresh(false)
}

func (m *Meter) refresh(force bool) {
	now := m.opt.Now()
	if now.Sub(m.start) < m.opt.Delay {
		return
	}
	if !force && !m.last.IsZero() && now.Sub(m.last) < m.opt.Every {
		return
	}
	m.last = now
	line := Line(m.what, m.done, m.total, now.Sub(m.start), m.status)
	if m.opt.Terminal {
		fmt.Fprintf(m.w, "\r%s\033[K", line)
		m.shown = true
	} else {
		fmt.Fprintln(m.w, line)
	}
}

// Done ends the meter: the line is erased from the terminal.
func (m *Meter) Done() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shown {
		fmt.Fprint(m.w, "\r\033[K")
		m.shown = false
	}
}

// Estimate extrapolates out, a size produced while done of total bytes
// were read, to the whole job; 0 when it cannot (no total, nothing done).
func (m *Meter) Estimate(out int64) int64 {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.total <= 0 || m.done <= 0 {
		return 0
	}
	return int64(float64(out) * float64(m.total) / float64(m.done))
}

// Fraction is the part of the job done, 0 to 1; 0 without a total.
func (m *Meter) Fraction() float64 {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.total <= 0 {
		return 0
	}
	return min(1, float64(m.done)/float64(m.total))
}

// Reader returns r counting the bytes read through it into the meter; r
// itself for a nil meter.
func (m *Meter) Reader(r io.Reader) io.Reader {
	if m == nil {
		return r
	}
	return &reader{r: r, m: m}
}

type reader struct {
	r io.Reader
	m *Meter
}

func (c *reader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.m.Add(int64(n))
	}
	return n, err
}

// ReaderAt returns r (an input read at offsets: cut, index) showing the
// furthest byte read as done: reads behind it (checksums of earlier
// parts) do not move it back; r itself for a nil meter.
func (m *Meter) ReaderAt(r io.ReaderAt) io.ReaderAt {
	if m == nil || r == nil {
		return r
	}
	return &readerAt{r: r, m: m}
}

type readerAt struct {
	r        io.ReaderAt
	m        *Meter
	mu       sync.Mutex
	furthest int64
}

func (c *readerAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.mu.Lock()
	if end := off + int64(n); end > c.furthest {
		c.furthest = end
		c.m.Update(end)
	}
	c.mu.Unlock()
	return n, err
}

// Line formats a progress line: what, the bytes done (and the total, the
// percentage and the time left when total > 0), the mean rate over
// elapsed, and status.
//
//	iotap: timeline: 45% 120.3 of 268.0 MB, 85.2 MB/s, 1.7s left
func Line(what string, done, total int64, elapsed time.Duration, status string) string {
	var b strings.Builder
	b.WriteString(what)
	b.WriteString(": ")
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done) / elapsed.Seconds()
	}
	if total > 0 {
		pct := done * 100 / total
		fmt.Fprintf(&b, "%d%% %s of %s", min(pct, 100), size(done), size(total))
	} else {
		b.WriteString(size(done))
	}
	fmt.Fprintf(&b, ", %s/s", size(int64(rate)))
	if total > 0 && rate > 0 && done < total {
		left := time.Duration(float64(total-done) / rate * float64(time.Second))
		fmt.Fprintf(&b, ", %s left", left.Round(time.Second))
	}
	if status != "" {
		b.WriteString(", ")
		b.WriteString(status)
	}
	return b.String()
}

// size prints n bytes in kB, MB or GB (powers of 1000, one decimal).
func size(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// SetTotal sets the job's size in bytes (<= 0: unknown).
func (m *Meter) SetTotal(n int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.total = n
	m.mu.Unlock()
}

// Progress returns a callback for a job that reports done of total bytes
// itself (mmiotrace.FilterOptions.Progress): it sets the meter's total and
// done. Nil for a nil meter (no progress shown).
func (m *Meter) Progress() func(done, total int64) {
	if m == nil {
		return nil
	}
	return func(done, total int64) {
		m.SetTotal(total)
		m.Update(done)
	}
}
