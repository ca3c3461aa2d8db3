package userevents

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	iunix "github.com/iotap/iotap/internal/unix"
	"github.com/iotap/iotap/tracefs"
)

// PerfStats counts what a PerfReader saw and lost.
type PerfStats struct {
	Events  uint64 // decoded events handed to the callback
	Lost    uint64 // events the kernel reports lost (PERF_RECORD_LOST, PERF_RECORD_LOST_SAMPLES)
	Unknown uint64 // records of other types or of events not asked for
	Bad     uint64 // samples that did not decode against their format
}

// PerfReader reads user events back through perf ring buffers, one per
// event and online CPU (perf_event_open(2) on the tracepoint, every
// process, a sample per event with its raw record), the way perf record
// does. Attaching sets the events' enable bit ("Used by: perf" in
// user_events_status) without touching ftrace. Needs root or
// CAP_PERFMON (and perf_event_paranoid allowing tracepoints).
type PerfReader struct {
	top     *tracefs.FS
	pages   int
	formats map[uint16]*Format
	systems map[uint16]string
	rings   []*perfRing
	stats   PerfStats
	started bool
	scratch []byte
	ev      Recorded
}

type perfRing struct {
	fd   *iunix.FD
	cpu  int
	m    []byte // the mapping: control page, then the data area
	ctl  iunix.PerfPage
	data []byte
	// readLost: the event was opened with PERF_FORMAT_LOST.
	readLost bool
	lostRecs uint64 // lost counts of this ring's PERF_RECORD_LOST records
}

const perfFormatLost = 1 << 4 // PERF_FORMAT_LOST

// NewPerfReader prepares a reader whose rings have pages pages of data
// each (a power of two; 0: 64, 256 KiB).
func NewPerfReader(top *tracefs.FS, pages int) (*PerfReader, error) {
	if pages == 0 {
		pages = 64
	}
	if pages < 1 || pages&(pages-1) != 0 {
		return nil, &Error{Op: "perf", Err: ErrInvalid, Hint: fmt.Sprintf("ring of %d pages: want a power of two", pages)}
	}
	return &PerfReader{top: top, pages: pages, formats: map[uint16]*Format{}, systems: map[uint16]string{}}, nil
}

// Add opens rings for events/SYSTEM/NAME on every online CPU, disabled
// until Start.
func (r *PerfReader) Add(system, name string) (*Format, error) {
	if system != System && system != MultiSystem || !ValidTracepoint(name) {
		return nil, &Error{Op: "perf", Event: system + "/" + name, Err: ErrInvalidCommand, Hint: "bad event name"}
	}
	b, err := r.top.ReadFile("events", system, name, "format")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &Error{Op: "perf", Event: name, Err: ErrNotFound, Errno: err, Hint: "register it first"}
		}
		return nil, &Error{Op: "perf", Event: name, Err: ErrInvalid, Errno: err}
	}
	f, err := ParseFormat(b)
	if err != nil {
		return nil, err
	}
	cpus, err := tracefs.OnlineCPUs(tracefs.DefaultOnlineCPUs)
	if err != nil {
		return nil, fmt.Errorf("userevents: online cpus: %w", err)
	}
	for _, cpu := range cpus {
		ring, err := r.open(uint64(f.ID), cpu)
		if err != nil {
			return nil, &Error{Op: "perf", Event: name, Err: ErrPermission, Errno: err, Hint: "perf_event_open on a tracepoint needs root or CAP_PERFMON"}
		}
		r.rings = append(r.rings, ring)
	}
	r.formats[uint16(f.ID)] = f
	r.systems[uint16(f.ID)] = system
	return f, nil
}

func (r *PerfReader) open(id uint64, cpu int) (*perfRing, error) {
	attr := iunix.PerfEventAttr{
		Type:        iunix.PerfTypeTracepoint,
		Size:        iunix.PerfAttrSize,
		Config:      id,
		Sample:      1, // every event
		Sample_type: PerfSampleType,
		Bits:        iunix.PerfBitDisabled,
		Wakeup:      1,
	}
	// PERF_FORMAT_LOST (Linux 6.0): read(2) on the event gives its count
	// and how many samples it lost, which counts losses at the very end
	// too (PERF_RECORD_LOST only appears once the ring has room again).
	attr.Read_format = perfFormatLost
	fd, err := iunix.PerfEventOpen(&attr, -1, cpu)
	if err != nil {
		attr.Read_format = 0
		if fd, err = iunix.PerfEventOpen(&attr, -1, cpu); err != nil {
			return nil, err
		}
	}
	m, err := iunix.Mmap(fd.Int(), 0, (1+r.pages)*os.Getpagesize(), iunix.PROT_READ|iunix.PROT_WRITE, iunix.MAP_SHARED)
	if err != nil {
		fd.Close()
		return nil, err
	}
	ring := &perfRing{fd: fd, cpu: cpu, m: m, ctl: iunix.NewPerfPage(m), readLost: attr.Read_format != 0}
	off, size := ring.ctl.DataArea()
	if off == 0 { // kernels before 4.1 leave it zero: data follows the page
		off, size = uint64(os.Getpagesize()), uint64(r.pages*os.Getpagesize())
	}
	if off+size > uint64(len(m)) {
		iunix.Munmap(m)
		fd.Close()
		return nil, fmt.Errorf("perf data area %d+%d outside the %d-byte mapping", off, size, len(m))
	}
	ring.data = m[off : off+size]
	return ring, nil
}

// Start enables every ring.
func (r *PerfReader) Start() error {
	for _, ring := range r.rings {
		if err := iunix.PerfEnable(ring.fd.Int()); err != nil {
			return &Error{Op: "perf", Err: ErrInvalid, Errno: err}
		}
	}
	r.started = true
	return nil
}

// Run hands every event to fn until ctx is done (then it disables the
// rings and drains them) or fn fails. Stats().Lost is up to date after
// each poll.
func (r *PerfReader) Run(ctx context.Context, fn func(*Recorded) error) error {
	if !r.started {
		if err := r.Start(); err != nil {
			return err
		}
	}
	idle := 0
	for {
		stop := ctx.Err() != nil
		if stop {
			for _, ring := range r.rings {
				iunix.PerfDisable(ring.fd.Int())
			}
		}
		got, err := r.Poll(fn)
		if err != nil {
			return err
		}
		if stop {
			return nil
		}
		if got > 0 {
			idle = 0
			continue
		}
		idle++
		select {
		case <-ctx.Done():
		case <-time.After(time.Millisecond * time.Duration(min(idle, 20))):
		}
	}
}

// Poll reads every complete record of every ring once, without waiting,
// and returns how many it read.
func (r *PerfReader) Poll(fn func(*Recorded) error) (int, error) {
	total := 0
	for _, ring := range r.rings {
		n, err := r.drain(ring, &r.ev, fn)
		total += n
		if err != nil {
			return total, err
		}
	}
	r.stats.Lost = r.lost()
	return total, nil
}

// lost sums, per ring, the larger of the lost counts from PERF_RECORD_LOST
// records and from read(2) with PERF_FORMAT_LOST.
func (r *PerfReader) lost() uint64 {
	var sum uint64
	var b [16]byte
	for _, ring := range r.rings {
		l := ring.lostRecs
		if ring.readLost {
			if n, err := iunix.Read(ring.fd.Int(), b[:]); err == nil && n == 16 {
				l = max(l, binary.LittleEndian.Uint64(b[8:]))
			}
		}
		sum += l
	}
	return sum
}

// drain reads every complete record of ring.
func (r *PerfReader) drain(ring *perfRing, ev *Recorded, fn func(*Recorded) error) (int, error) {
	head := ring.ctl.DataHead() // an acquire load: the records below head are complete
	tail := ring.ctl.DataTail()
	size := uint64(len(ring.data))
	n := 0
	for tail < head {
		at := tail % size
		hdr := r.span(ring.data, at, 8)
		rsize := uint64(uint16(hdr[6]) | uint16(hdr[7])<<8)
		if rsize < 8 || rsize > head-tail {
			return n, &PerfRecordError{int(at), fmt.Sprintf("record size %d with %d bytes published", rsize, head-tail)}
		}
		rec, _, err := DecodePerfRecord(r.span(ring.data, at, rsize))
		tail += rsize
		if err != nil {
			r.stats.Bad++
			continue
		}
		n++
		switch rec.Type {
		case PerfRecordSample:
			if err := r.sample(&rec, ring.cpu, ev, fn); err != nil {
				ring.ctl.SetDataTail(tail)
				return n, err
			}
		case PerfRecordLost, PerfRecordLostSamples:
			ring.lostRecs += rec.Lost
		default:
			r.stats.Unknown++
		}
	}
	ring.ctl.SetDataTail(tail) // a release store: the kernel may reuse the space
	return n, nil
}

// span returns n bytes of the ring at offset at, copied to scratch when
// they wrap around the end.
func (r *PerfReader) span(data []byte, at, n uint64) []byte {
	if at+n <= uint64(len(data)) {
		return data[at : at+n]
	}
	r.scratch = append(r.scratch[:0], data[at:]...)
	return append(r.scratch, data[:n-(uint64(len(data))-at)]...)
}

func (r *PerfReader) sample(rec *PerfRecord, cpu int, ev *Recorded, fn func(*Recorded) error) error {
	c, ok := ParseCommon(rec.Raw)
	f := r.formats[c.Type]
	if !ok || f == nil {
		r.stats.Unknown++
		return nil
	}
	vals, err := f.Decode(rec.Raw, ev.Values[:0])
	if err != nil {
		r.stats.Bad++
		return nil
	}
	eh, err := eventHeader(f, rec.Raw)
	if err != nil {
		r.stats.Bad++
		return nil
	}
	*ev = Recorded{System: r.systems[c.Type], Name: f.Name, TS: rec.Time, CPU: int(rec.CPU), PID: c.PID, Format: f, Values: vals, EventHeader: eh}
	r.stats.Events++
	return fn(ev)
}

// Stats returns the counts so far.
func (r *PerfReader) Stats() PerfStats { return r.stats }

// Close disables and closes every ring.
func (r *PerfReader) Close() error {
	var first error
	for _, ring := range r.rings {
		iunix.PerfDisable(ring.fd.Int())
		if err := iunix.Munmap(ring.m); err != nil && first == nil {
			first = err
		}
		if err := ring.fd.Close(); err != nil && first == nil {
			first = err
		}
	}
	r.rings = nil
	return first
}
