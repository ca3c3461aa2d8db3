//go:build linux

package usbmon

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/iotap/iotap/internal/unix"
)

// The kernel stores each ring record (64-byte header, ISO descriptors,
// data) rounded up to 64 bytes (PKT_ALIGN in mon_bin.c).
const ringAlign = 64

// queueChunk is the unit of the user-space queue: whole records, one after
// the other, as the kernel stored them (without the ring's padding).
const queueChunk = 1 << 20

// flushEvery is how many ring bytes the draining thread copies out before
// it releases them, within a batch.
const flushEvery = 128 << 10

// prefault is how many queue chunks are touched when the capture starts.
const prefault = 4

// queue drains the kernel ring on a thread of its own into chunks that
// ReadInto hands out (CaptureOptions.Queue).
type queue struct {
	full chan []byte // filled chunks, in capture order
	// Free chunks, reused last in first out: the chunks in use stay few
	// and their pages resident (a page touched for the first time costs a
	// page fault while the ring waits).
	freeMu  sync.Mutex
	free    [][]byte
	freeSig chan struct{} // a chunk was handed back
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	max     int   // chunks
	bytes   int   // bytes queued (under Capture.mu)
	err     error // why draining ended, read after done
}

// startQueue starts the draining goroutine and waits until it has set its
// thread's priority.
func (c *Capture) startQueue() error {
	n := max(2, c.opt.Queue/queueChunk)
	q := &queue{
		full:    make(chan []byte, n+1),
		freeSig: make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		max:     n,
	}
	// All chunks up front, in one allocation: the draining thread never
	// allocates, so it never helps the garbage collector nor waits for it
	// to start (a stop-the-world needs the writer's thread, which may be
	// waiting for the CPU behind the draining thread: priority inversion).
	// Pages the queue never uses are never touched.
	// The first prefault chunks are touched now (they serve steady
	// traffic); pages the queue never uses are never touched.
	mem := make([]byte, n*queueChunk)
	for i := n - 1; i >= 0; i-- {
		q.free = append(q.free, mem[i*queueChunk:i*queueChunk:(i+1)*queueChunk])
	}
	for i := 0; i < min(n, prefault)*queueChunk; i += 4096 {
		mem[i] = 0
	}
	started := make(chan error, 1)
	c.q = q
	go c.drain(started)
	if err := <-started; err != nil {
		<-q.done
		c.q = nil
		return err
	}
	return nil
}

// get returns a free chunk (emptied), or nil.
func (q *queue) get() []byte {
	q.freeMu.Lock()
	defer q.freeMu.Unlock()
	n := len(q.free)
	if n == 0 {
		return nil
	}
	b := q.free[n-1]
	q.free = q.free[:n-1]
	return b[:0]
}

// put hands a chunk back.
func (q *queue) put(b []byte) {
	q.freeMu.Lock()
	q.free = append(q.free, b)
	q.freeMu.Unlock()
	select {
	case q.freeSig <- struct{}{}:
	default:
	}
}

func (q *queue) stopAndWait() {
	q.once.Do(func() { close(q.stop) })
	<-q.done
}

// drain runs on its own locked thread (never unlocked: a thread whose
// priority was raised ends with the goroutine).
func (c *Capture) drain(started chan<- error) {
	q := c.q
	defer close(q.done)
	defer close(q.full)
	runtime.LockOSThread()
	if c.opt.Nice != 0 {
		if err := unix.SetThreadNice(c.opt.Nice); err != nil {
			if !c.opt.NiceIfAllowed {
				q.err = err
				started <- fmt.Errorf("usbmon: nice %d for the capture thread: %w", c.opt.Nice, err)
				return
			}
		} else {
			c.mu.Lock()
			c.stats.Nice = c.opt.Nice
			c.mu.Unlock()
		}
	}
	started <- nil
	q.err = c.drainLoop()
}

// drainLoop fetches, copies out and releases ring records until the
// context ends (then what the kernel had queued at that moment is still
// taken) or Close stops it.
func (c *Capture) drainLoop() error {
	q := c.q
	fd := c.fd.Int()
	var (
		chunk     []byte
		pending   uint32 // copied, to release with the next MFETCH
		fetchedAt time.Time
		stopping  bool
		left      int
	)
	send := func() {
		if len(chunk) > 0 {
			c.mu.Lock()
			q.bytes += len(chunk)
			c.stats.QueuePeak = max(c.stats.QueuePeak, q.bytes)
			c.mu.Unlock()
			q.full <- chunk // never blocks: at most q.max chunks exist
			chunk = nil
		}
	}
	// room returns a chunk with n free bytes, waiting for ReadInto to hand
	// one back when the queue is full; false when stopped meanwhile.
	room := func(n int) bool {
		if chunk != nil && cap(chunk)-len(chunk) >= n {
			return true
		}
		send()
		for {
			if chunk = q.get(); chunk != nil {
				return true
			}
			select {
			case <-q.freeSig:
			case <-q.stop:
				return false
			}
		}
	}
	for {
		select {
		case <-q.stop:
			send()
			return nil
		default:
		}
		if !stopping && c.ctx.Err() != nil {
			stopping = true
			c.queryStats()
			c.mu.Lock()
			left = int(c.stats.Queued) - int(pending)
			c.mu.Unlock()
		}
		if stopping && left <= 0 {
			send()
			c.finalStats()
			return nil
		}
		if !fetchedAt.IsZero() {
			d := time.Since(fetchedAt)
			c.mu.Lock()
			c.stats.MaxStall = max(c.stats.MaxStall, d)
			c.mu.Unlock()
		}
		fetched, flushed, err := unix.UsbmonMfetch(fd, c.vec, pending)
		if flushed <= pending {
			pending -= flushed
		} else {
			pending = 0
		}
		c.mu.Lock()
		c.stats.Flushed += uint64(flushed)
		c.mu.Unlock()
		if err == nil && fetched > 0 {
			fetchedAt = time.Now()
			vec := c.vec[:fetched]
			c.notePeaks(vec, 0)
			fillers := 0
			pending += fetched
			done, undone := 0, 0 // records taken from vec; ring bytes of them not yet released
			for i, off32 := range vec {
				// Release what has been copied every flushEvery ring bytes
				// (MON_IOCH_MFLUSH): a large batch takes a while to copy, and
				// the kernel can use the space meanwhile.
				if undone >= flushEvery {
					if n, err := unix.UsbmonMflush(fd, i-done); err == nil && n > 0 {
						pending -= uint32(n)
						done += n
						c.mu.Lock()
						c.stats.Flushed += uint64(n)
						c.mu.Unlock()
					}
					undone = 0
				}
				off := int(off32)
				if off+HeaderLen64 > len(c.ring) {
					return fmt.Errorf("usbmon: ring offset %d outside the %d-byte ring: %w", off, len(c.ring), ErrFormat)
				}
				h := c.ring[off : off+HeaderLen64]
				undone += (HeaderLen64 + int(native.Uint32(h[36:])) + ringAlign - 1) &^ (ringAlign - 1)
				if EventType(h[8]) == Filler {
					fillers++
					continue
				}
				if stopping {
					if left <= 0 {
						continue
					}
					left--
				}
				end := off + HeaderLen64 + int(native.Uint32(h[36:]))
				if end > len(c.ring) {
					return fmt.Errorf("usbmon: record at ring offset %d (%d bytes) crosses the ring end: %w", off, end-off, ErrFormat)
				}
				if !room(end - off) {
					return nil
				}
				chunk = append(chunk, c.ring[off:end]...)
			}
			c.mu.Lock()
			c.stats.Batches++
			c.stats.Fillers += uint64(fillers)
			c.mu.Unlock()
			if int(fetched) < len(c.vec) {
				send() // the ring is empty: hand out what we have
			}
			if !stopping {
				c.maybeStats()
			}
			continue
		}
		if err != nil && !errors.Is(err, unix.EAGAIN) {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return fmt.Errorf("usbmon: MON_IOCX_MFETCH: %w", err)
		}
		fetchedAt = time.Time{}
		send()
		if stopping {
			c.finalStats()
			return nil
		}
		c.maybeStats()
		unix.UsbmonPollIn(fd, 50*time.Millisecond)
	}
}

// finalStats reads the drop counter once the events queued at the stop
// have been taken, and freezes it: the ring is no longer drained while the
// queue is written out, and what the kernel drops then was never part of
// the capture.
func (c *Capture) finalStats() {
	c.queryStats()
	c.mu.Lock()
	c.statsFinal = true
	c.mu.Unlock()
}

// notePeaks records how full the ring was when MFETCH returned vec
// (events not yet released: vec plus unflushed ones, counted as bytes of
// the batch only, the best estimate the offsets give).
func (c *Capture) notePeaks(vec []uint32, _ uint32) {
	used := 0
	var wait time.Duration // of the oldest event fetched
	for _, off := range vec {
		if int(off)+HeaderLen64 > len(c.ring) {
			continue
		}
		if h := c.ring[off:]; wait == 0 && EventType(h[8]) != Filler {
			// The kernel stamp is the wall clock, like time.Now.
			wait = time.Since(time.Unix(int64(native.Uint64(h[16:])), int64(int32(native.Uint32(h[24:])))*1000))
		}
		n := HeaderLen64 + int(native.Uint32(c.ring[off+36:]))
		used += (n + ringAlign - 1) &^ (ringAlign - 1)
	}
	c.mu.Lock()
	c.stats.RingPeak = max(c.stats.RingPeak, min(used, len(c.ring)))
	c.stats.BatchPeak = max(c.stats.BatchPeak, len(vec))
	c.stats.MaxWait = max(c.stats.MaxWait, wait)
	c.mu.Unlock()
}

// readQueued hands out the records the draining goroutine queued.
func (c *Capture) readQueued(ev *Event) error {
	q := c.q
	for {
		if c.pos < len(c.cur) {
			rest := c.cur[c.pos:]
			n := HeaderLen64 + int(native.Uint32(rest[36:]))
			c.rec = rest[:n]
			c.pos += n
			if err := DecodePacket(c.rec, HeaderLen64, native, ev, c.iso); err != nil {
				return err
			}
			if cap(ev.ISO) > cap(c.iso) {
				c.iso = ev.ISO[:0]
			}
			ev.Format = FormatBinary
			c.stats.Events++
			return nil
		}
		if c.cur != nil {
			c.mu.Lock()
			q.bytes -= len(c.cur)
			c.mu.Unlock()
			q.put(c.cur)
			c.cur, c.pos = nil, 0
			// A chunk handed out: the place to flush output.
			if c.opt.OnBatch != nil {
				c.opt.OnBatch()
			}
		}
		var ok bool
		c.cur, ok = <-q.full
		if !ok {
			<-q.done
			if q.err != nil {
				return q.err
			}
			return io.EOF
		}
	}
}
