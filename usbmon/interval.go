package usbmon

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// IntervalStats are the counts of one interval of a [Recording]'s
// periodic statistics (RecordOptions.Interval), as perf stat -I prints
// them: the events written in [Start, End) and their captured data bytes.
// Over all intervals they add up to the recording's totals.
type IntervalStats struct {
	Start, End time.Duration // since the recording started
	Events     uint64
	Bytes      uint64
}

// String formats the interval as 'iotap usb capture --interval' prints it.
func (s IntervalStats) String() string {
	secs := (s.End - s.Start).Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(s.Events) / secs
	}
	return fmt.Sprintf("%10.3f %12d events %14d bytes %12.0f events/s", s.End.Seconds(), s.Events, s.Bytes, rate)
}

// intervals counts the events the writer goroutine writes and reports
// them every interval from a goroutine of its own.
type intervals struct {
	events, bytes atomic.Uint64
	start         time.Time
	prev          time.Duration
	report        func(IntervalStats)
	mu            sync.Mutex // serializes emit (ticker and stop)
	done          chan struct{}
	wg            sync.WaitGroup
}

func startIntervals(every time.Duration, report func(IntervalStats)) *intervals {
	iv := &intervals{start: time.Now(), report: report, done: make(chan struct{})}
	iv.wg.Add(1)
	go func() {
		defer iv.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-iv.done:
				return
			case now := <-t.C:
				iv.emit(now)
			}
		}
	}()
	return iv
}

func (iv *intervals) add(bytes int) {
	iv.events.Add(1)
	iv.bytes.Add(uint64(bytes))
}

func (iv *intervals) emit(now time.Time) {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	end := now.Sub(iv.start)
	s := IntervalStats{Start: iv.prev, End: end, Events: iv.events.Swap(0), Bytes: iv.bytes.Swap(0)}
	iv.prev = end
	iv.report(s)
}

// stop ends the ticker and reports the last, partial interval.
func (iv *intervals) stop() {
	close(iv.done)
	iv.wg.Wait()
	iv.emit(time.Now())
}
