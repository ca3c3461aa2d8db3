package usbmon

import (
	"errors"
	"runtime"
	"sync"
)

// Prefetch decoding: a pcap or pcapng capture is read and its
// records decoded on a goroutine of their own, a batch of events ahead
// of the caller, which pairs, counts or formats them on its own core
// ('iotap usb read|stats|pair --workers'). The events come out in input
// order, with the error that ended the input after the last of them.

const (
	prefetchEvents = 512     // events per batch
	prefetchArena  = 1 << 20 // payload bytes per batch
	prefetchDepth  = 3       // batches in flight
)

type prefetchBatch struct {
	evs     []Event
	lts     []int // the reader's LinkType after each event
	arena   []byte
	err     error
	dropped uint64
}

// PrefetchReader reads a Reader on another goroutine (see Prefetch).
type PrefetchReader struct {
	r       Reader
	full    chan *prefetchBatch
	free    chan *prefetchBatch
	stop    chan struct{}
	once    sync.Once
	cur     *prefetchBatch
	i       int
	lt      int
	dropped uint64
	end     error
}

// errPrefetchClosed ends reading after Close.
var errPrefetchClosed = errors.New("usbmon: reader closed")

// CanPrefetch reports whether r can be read by Prefetch: pcap and pcapng
// files, whose readers call nothing of the caller's while they read.
// Text readers can report skipped lines through ReaderOptions.OnSkip and
// are read in place.
func CanPrefetch(r Reader) bool {
	switch r.(type) {
	case *pcapReader, *pcapngReader:
		return true
	}
	return false
}

// Prefetch returns a Reader of the events of r (CanPrefetch(r) must
// hold) decoded on a goroutine of its own, up to three batches of 512
// events ahead. Events and their data stay valid until the next ReadInto
// call, as with r. Close ends the goroutine when reading stops before the
// end of the input. LinkType and Dropped give r's values as of the last
// event returned (Dropped: once the input ended).
func Prefetch(r Reader) *PrefetchReader {
	p := &PrefetchReader{r: r, full: make(chan *prefetchBatch, prefetchDepth),
		free: make(chan *prefetchBatch, prefetchDepth+1), stop: make(chan struct{})}
	for i := 0; i < prefetchDepth+1; i++ {
		p.free <- &prefetchBatch{evs: make([]Event, 0, prefetchEvents), lts: make([]int, 0, prefetchEvents),
			arena: make([]byte, 0, prefetchArena)}
	}
	go p.fill()
	return p
}

// fill runs on the prefetch goroutine.
func (p *PrefetchReader) fill() {
	lt, _ := p.r.(LinkTyper)
	for {
		var b *prefetchBatch
		select {
		case b = <-p.free:
		case <-p.stop:
			return
		}
		b.evs, b.lts, b.arena, b.err = b.evs[:0], b.lts[:0], b.arena[:0], nil
		for len(b.evs) < prefetchEvents {
			b.evs = append(b.evs, Event{})
			ev := &b.evs[len(b.evs)-1]
			if err := p.r.ReadInto(ev); err != nil {
				b.evs = b.evs[:len(b.evs)-1]
				b.err = err
				break
			}
			// The reader's buffers are reused by its next call: keep
			// the payload (and ISO descriptors) with the batch.
			if len(ev.Data) > 0 {
				if len(b.arena)+len(ev.Data) <= cap(b.arena) {
					n := len(b.arena)
					b.arena = append(b.arena, ev.Data...)
					ev.Data = b.arena[n:len(b.arena):len(b.arena)]
				} else {
					ev.Data = append([]byte(nil), ev.Data...)
				}
			}
			if len(ev.ISO) > 0 {
				ev.ISO = append([]ISODesc(nil), ev.ISO...)
			}
			l := 0
			if lt != nil {
				l = lt.LinkType()
			}
			b.lts = append(b.lts, l)
			if len(b.arena) >= cap(b.arena)-cap(b.arena)/8 {
				break
			}
		}
		if b.err != nil {
			if d, ok := p.r.(interface{ Dropped() uint64 }); ok {
				b.dropped = d.Dropped()
			}
		}
		select {
		case p.full <- b:
		case <-p.stop:
			return
		}
		if b.err != nil {
			return
		}
	}
}

// ReadInto reads the next event into ev.
func (p *PrefetchReader) ReadInto(ev *Event) error {
	for {
		if p.end != nil {
			return p.end
		}
		if b := p.cur; b != nil {
			if p.i < len(b.evs) {
				*ev = b.evs[p.i]
				p.lt = b.lts[p.i]
				p.i++
				return nil
			}
			if b.err != nil {
				p.end, p.dropped = b.err, b.dropped
				continue
			}
			p.free <- b
		}
		p.cur, p.i = <-p.full, 0
	}
}

// Read returns the next event, a copy the caller keeps.
func (p *PrefetchReader) Read() (*Event, error) {
	var ev Event
	if err := p.ReadInto(&ev); err != nil {
		return nil, err
	}
	return ev.Clone(), nil
}

// Format is the format of the underlying reader.
func (p *PrefetchReader) Format() Format { return p.r.Format() }

// LinkType is the link type of the last event read.
func (p *PrefetchReader) LinkType() int { return p.lt }

// Dropped is what the underlying reader reports once the input ended
// (0 before).
func (p *PrefetchReader) Dropped() uint64 { return p.dropped }

// Close stops the prefetch goroutine; the reader returns no more events.
func (p *PrefetchReader) Close() error {
	p.once.Do(func() { close(p.stop) })
	if p.end == nil {
		p.end = errPrefetchClosed
	}
	return nil
}

// PrefetchMin is the smallest capture Prefetch is used for by default
// (UsePrefetch with workers 0).
const PrefetchMin = 16 << 20

// UsePrefetch decides whether a capture of size bytes (-1: unknown) read
// by r is read through Prefetch, for a --workers of workers: 1 never, 2
// or more whenever r can be (CanPrefetch), 0 (the default) for captures
// of PrefetchMin bytes or more on more than two cores. On two cores
// shared with other work the second goroutine costs more CPU than it
// saves time (docs/performance.md).
func UsePrefetch(r Reader, size int64, workers int) bool {
	switch {
	case workers == 1 || !CanPrefetch(r):
		return false
	case workers >= 2:
		return true
	}
	return size >= PrefetchMin && runtime.GOMAXPROCS(0) > 2
}
