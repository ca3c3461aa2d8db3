package rotate

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Stats are the counts of one interval ([Interval]), as perf stat -I
// prints them: the events in [Start, End) and their bytes (what a byte is
// belongs to the caller: usbmon counts captured data bytes, mmiotrace and
// user events the bytes of the log lines). Over all intervals they add up
// to the totals.
type Stats struct {
	Start, End time.Duration // since the interval counting started
	Events     uint64
	Bytes      uint64
}

// StatsHeader is the header line for the lines of Stats.String.
var StatsHeader = fmt.Sprintf("%10s %12s %21s %21s", "time(s)", "events", "bytes", "rate")

// String formats the interval as the --interval option of iotap's capture
// commands prints it.
func (s Stats) String() string {
	secs := (s.End - s.Start).Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(s.Events) / secs
	}
	return fmt.Sprintf("%10.3f %12d events %14d bytes %12.0f events/s", s.End.Seconds(), s.Events, s.Bytes, rate)
}

// Interval counts events (Add, from any goroutine) and reports the counts
// of every interval from a goroutine of its own, never concurrently.
type Interval struct {
	events, bytes atomic.Uint64
	start         time.Time
	prev          time.Duration
	report        func(Stats)
	mu            sync.Mutex // serializes emit (ticker and Stop)
	done          chan struct{}
	wg            sync.WaitGroup
	stopped       bool
}

// StartInterval starts counting; report is called every interval and once
// more by Stop with the last, partial interval.
func StartInterval(every time.Duration, report func(Stats)) *Interval {
	iv := &Interval{start: time.Now(), report: report, done: make(chan struct{})}
	iv.wg.Add(1)
	go func() {
		defer iv.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-iv.done:
				return
			case <-t.C:
				iv.emit()
			}
		}
	}()
	return iv
}

// Add counts events and bytes in the current interval. A nil Interval
// counts nothing.
func (iv *Interval) Add(events, bytes uint64) {
	if iv == nil {
		return
	}
	iv.events.Add(events)
	iv.bytes.Add(bytes)
}

// emit reports the interval that ends now. The time is read under the lock
// (not taken from the tick, whose value can be older than the previous
// interval's end when the goroutine runs late), so intervals never run
// backwards.
func (iv *Interval) emit() {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	end := max(time.Since(iv.start), iv.prev)
	s := Stats{Start: iv.prev, End: end, Events: iv.events.Swap(0), Bytes: iv.bytes.Swap(0)}
	iv.prev = end
	iv.report(s)
}

// Stop ends the ticker and reports the last, partial interval. It is safe
// to call twice, and on a nil Interval.
func (iv *Interval) Stop() {
	if iv == nil {
		return
	}
	iv.mu.Lock()
	stopped := iv.stopped
	iv.stopped = true
	iv.mu.Unlock()
	if stopped {
		return
	}
	close(iv.done)
	iv.wg.Wait()
	iv.emit()
}
