package userevents

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	iunix "github.com/iotap/iotap/internal/unix"
	"github.com/iotap/iotap/tracefs"
)

// RecorderStats counts what a recording saw and lost.
type RecorderStats struct {
	Events    uint64 // decoded events handed to the callback
	Pages     uint64 // ring-buffer pages read
	Missed    uint64 // events the page headers say were lost (counted where the kernel stored the number)
	MissedAny uint64 // pages flagged "events missed" (some without a count)
	Overrun   uint64 // per-CPU stats: overrun + commit overrun + dropped, at the end
	Unknown   uint64 // records of events not asked for (other IDs)
	Bad       uint64 // records that did not decode against their format
}

// Lost returns how many events were lost. The per-CPU overrun counters
// and the page headers report the same losses, so the larger count wins;
// pages flagged without a count make it at least one per page.
func (s RecorderStats) Lost() uint64 {
	return max(s.Overrun, s.Missed, s.MissedAny)
}

// Recorder reads user events back through a private ftrace instance
// (instances/iotap-PID-N), so that it neither clears nor disturbs the
// global buffer: it enables the events there and reads the per-CPU binary
// buffers (per_cpu/cpuN/trace_pipe_raw), decoding every record with its
// format file.
type Recorder struct {
	top     *tracefs.FS
	inst    *tracefs.FS
	instDir string
	formats map[uint16]*Format
	systems map[uint16]string
	enabled []Format
	layout  PageLayout
	fds     []*iunix.FD
	cpus    []int
	stats   RecorderStats
	started bool
	stale   []string
}

// RemovedStale returns the instances of dead recorders that NewRecorder
// removed.
func (r *Recorder) RemovedStale() []string { return r.stale }

// removeStaleInstances removes instances/iotap-PID-N whose process no
// longer exists and returns their names. An instance whose PID is alive
// is kept, even if the PID now belongs to another program: removing a
// live recorder's instance would be worse than leaving one behind.
func removeStaleInstances(top *tracefs.FS) []string {
	dir, err := top.Path("instances")
	if err != nil {
		return nil
	}
	if _, err := os.Stat("/proc/self"); err != nil {
		return nil // no procfs: no way to tell the dead from the living
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range ents {
		pid, ok := instancePID(e.Name())
		if !ok || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed
}

// instancePID returns PID of an instance name "iotap-PID-N".
func instancePID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "iotap-")
	if !ok {
		return 0, false
	}
	p, n, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	if err != nil || pid <= 0 || strconv.Itoa(pid) != p {
		return 0, false
	}
	if seq, err := strconv.ParseUint(n, 10, 64); err != nil || strconv.FormatUint(seq, 10) != n {
		return 0, false
	}
	return pid, true
}

var instanceSeq atomic.Uint64

// NewRecorder creates a tracefs instance with bufferKB of ring buffer per
// CPU (0: the kernel default).
//
// Instances left behind by recorders whose process died without Close
// (SIGKILL) are removed first; RemovedStale names them.
func NewRecorder(top *tracefs.FS, bufferKB int) (*Recorder, error) {
	stale := removeStaleInstances(top)
	name := fmt.Sprintf("iotap-%d-%d", os.Getpid(), instanceSeq.Add(1))
	dir, err := top.Path("instances", name)
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &Error{Op: "record", Err: ErrNotSupported, Errno: err, Hint: "tracefs has no instances directory"}
		}
		return nil, &Error{Op: "record", Err: ErrPermission, Errno: err, Hint: "creating a tracefs instance needs root"}
	}
	r := &Recorder{top: top, inst: tracefs.New(dir), instDir: dir, formats: map[uint16]*Format{}, systems: map[uint16]string{}, layout: DefaultPageLayout, stale: stale}
	if b, err := top.ReadFile("events", "header_page"); err == nil {
		if l, err := ParseHeaderPage(b); err == nil {
			r.layout = l
		}
	}
	if bufferKB > 0 {
		if err := r.inst.SetBufferSizeKB(bufferKB); err != nil {
			r.Close()
			return nil, fmt.Errorf("userevents: buffer size: %w", err)
		}
	}
	return r, nil
}

// Add asks for events/SYSTEM/NAME (System or MultiSystem).
func (r *Recorder) Add(system, name string) (*Format, error) {
	if system != System && system != MultiSystem || !ValidTracepoint(name) {
		return nil, &Error{Op: "record", Event: system + "/" + name, Err: ErrInvalidCommand, Hint: "bad event name"}
	}
	b, err := r.top.ReadFile("events", system, name, "format")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &Error{Op: "record", Event: name, Err: ErrNotFound, Errno: err, Hint: "register it first (give its fields: 'NAME u32 a; ...')"}
		}
		return nil, &Error{Op: "record", Event: name, Err: ErrInvalid, Errno: err}
	}
	f, err := ParseFormat(b)
	if err != nil {
		return nil, err
	}
	r.formats[uint16(f.ID)] = f
	r.systems[uint16(f.ID)] = system
	r.enabled = append(r.enabled, Format{Name: system + "/" + name})
	return f, nil
}

func (r *Recorder) setEnabled(on bool) error {
	v := []byte("0")
	if on {
		v = []byte("1")
	}
	for _, e := range r.enabled {
		sys, name, _ := strings.Cut(e.Name, "/")
		if err := r.inst.WriteFile(v, "events", sys, name, "enable"); err != nil {
			return &Error{Op: "enable", Event: name, Err: ErrInvalid, Errno: err}
		}
	}
	return nil
}

// Start opens the per-CPU buffers and enables the events.
func (r *Recorder) Start() error {
	cpus, err := r.inst.CPUs()
	if err != nil {
		return fmt.Errorf("userevents: cpus: %w", err)
	}
	for _, c := range cpus {
		p, err := r.inst.Path("per_cpu", "cpu"+strconv.Itoa(c), "trace_pipe_raw")
		if err != nil {
			return err
		}
		fd, err := iunix.Open(p, iunix.O_RDONLY|iunix.O_NONBLOCK, 0)
		if err != nil {
			return fmt.Errorf("userevents: %w", err)
		}
		r.fds = append(r.fds, fd)
		r.cpus = append(r.cpus, c)
	}
	r.started = true
	return r.setEnabled(true)
}

// Run reads events and calls fn for each until ctx is done (or fn fails),
// then disables the events, drains the buffers and collects the loss
// counters.
func (r *Recorder) Run(ctx context.Context, fn func(*Recorded) error) error {
	if !r.started {
		if err := r.Start(); err != nil {
			return err
		}
	}
	page := make([]byte, 4096)
	var recs []RawRecord
	var ev Recorded
	idle := 0
	for {
		stop := ctx.Err() != nil
		if stop {
			if err := r.setEnabled(false); err != nil {
				return err
			}
		}
		got, err := r.poll(page, &recs, &ev, fn)
		if err != nil {
			return err
		}
		if stop {
			// Drain what is left after disabling.
			for got {
				if got, err = r.poll(page, &recs, &ev, fn); err != nil {
					return err
				}
			}
			break
		}
		if got {
			idle = 0
			continue
		}
		idle++
		d := time.Millisecond * time.Duration(min(idle, 20))
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
	var over uint64
	for _, c := range r.cpus {
		st, err := r.inst.CPUStats(c)
		if err == nil {
			over += st.Lost()
		}
	}
	r.stats.Overrun = over
	return nil
}

// poll reads at most one page per CPU; got reports whether any had data.
func (r *Recorder) poll(page []byte, recs *[]RawRecord, ev *Recorded, fn func(*Recorded) error) (bool, error) {
	got := false
	for i, fd := range r.fds {
		n, err := iunix.Read(fd.Int(), page)
		if err != nil {
			if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
				continue
			}
			return got, fmt.Errorf("userevents: read cpu%d trace_pipe_raw: %w", r.cpus[i], err)
		}
		if n == 0 {
			continue
		}
		got = true
		r.stats.Pages++
		info, rs, err := DecodePage(page[:n], r.layout, (*recs)[:0])
		*recs = rs
		if info.Missed {
			r.stats.MissedAny++
			r.stats.Missed += info.Lost
		}
		if err != nil {
			r.stats.Bad++
		}
		for _, rec := range rs {
			c, ok := ParseCommon(rec.Data)
			if !ok {
				r.stats.Bad++
				continue
			}
			f := r.formats[c.Type]
			if f == nil {
				r.stats.Unknown++
				continue
			}
			vals, err := f.Decode(rec.Data, ev.Values[:0])
			ev.Values = vals
			if err != nil {
				r.stats.Bad++
				continue
			}
			ev.System, ev.Name, ev.TS, ev.CPU, ev.PID, ev.Format = r.systems[c.Type], f.Name, rec.TS, r.cpus[i], c.PID, f
			if ev.EventHeader, err = eventHeader(f, rec.Data); err != nil {
				r.stats.Bad++
				continue
			}
			r.stats.Events++
			if err := fn(ev); err != nil {
				return got, err
			}
		}
	}
	return got, nil
}

// Stats returns the counters; Overrun is filled in when Run returns.
func (r *Recorder) Stats() RecorderStats { return r.stats }

// Close disables the events, closes the buffers and removes the instance.
func (r *Recorder) Close() error {
	if r.instDir == "" {
		return nil
	}
	_ = r.setEnabled(false)
	for _, fd := range r.fds {
		fd.Close()
	}
	r.fds = nil
	err := os.Remove(r.instDir)
	r.instDir = ""
	if err != nil {
		return fmt.Errorf("userevents: remove instance: %w", err)
	}
	return nil
}
