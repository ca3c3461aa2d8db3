//go:build linux

package userevents

import (
	"bufio"
	"context"
	"io"

	"github.com/iotap/iotap/rotate"
	"github.com/iotap/iotap/tracefs"
)

// RecordLines records the user events of opt.Events into w, one line per
// event (text, or one JSON object with opt.JSON), until ctx is done or
// opt.Count events were written: 'iotap events record' behind its flags.
// Events given with a Schema are registered first and stay registered
// while recording, so writers that start later are caught. Lost and
// undecodable events are counted in the result, not returned as an
// error. To split the output into a ring of files, pass a
// rotate.NewRotatingLines writer (and close it afterwards).
func RecordLines(ctx context.Context, w io.Writer, opt RecordLinesOptions) (res RecordLinesResult, err error) {
	fs := opt.FS
	if fs == nil {
		if fs, err = tracefs.Find(); err != nil {
			return res, err
		}
	}
	var p *Producer
	for _, t := range opt.Events {
		if t.Schema == nil {
			continue
		}
		if p == nil {
			if p, err = OpenFS(fs); err != nil {
				return res, err
			}
			defer p.Close()
		}
		if _, err := p.RegisterSchema(t.Schema, 0); err != nil {
			return res, err
		}
	}
	var src lineSource
	if opt.Perf {
		pr, err := NewPerfReader(fs, perfPages(opt.BufferKB))
		if err != nil {
			return res, err
		}
		src = perfLineSource{pr}
	} else {
		fr, err := NewRecorder(fs, opt.BufferKB)
		if err != nil {
			return res, err
		}
		for _, n := range fr.RemovedStale() {
			if opt.Logf != nil {
				opt.Logf("removed tracefs instance %s, left by a recorder that was killed", n)
			}
		}
		src = ftraceLineSource{fr}
	}
	defer src.Close()
	for _, t := range opt.Events {
		sys := System
		if !ValidName(t.Name) {
			sys = MultiSystem
		}
		if _, err := src.Add(sys, t.Name); err != nil {
			return res, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bw := bufio.NewWriterSize(w, 64<<10)
	var line []byte
	var n uint64
	if opt.JSON {
		format, clock := FormatTracefs, ClockTrace
		if opt.Perf {
			format, clock = FormatPerfRing, ClockPerf
		}
		bw.Write(AppendNDJSONInput(nil, "", format, clock))
	}
	if err := src.Start(); err != nil {
		return res, err
	}
	if opt.OnStart != nil {
		opt.OnStart()
	}
	var iv *rotate.Interval
	if opt.Interval > 0 && opt.OnInterval != nil {
		iv = rotate.StartInterval(opt.Interval, opt.OnInterval)
	}
	err = src.Run(ctx, func(rec *Recorded) error {
		line = line[:0]
		if opt.JSON {
			line = AppendNDJSON(line, rec)
		} else {
			line = append(AppendText(line, rec), '\n')
		}
		if _, err := bw.Write(line); err != nil {
			return err
		}
		iv.Add(1, uint64(len(line)))
		n++
		if opt.Count > 0 && n >= opt.Count {
			cancel()
		}
		return nil
	})
	iv.Stop()
	if ferr := bw.Flush(); ferr != nil && err == nil {
		err = ferr
	}
	res.Written = n
	res.Events, res.Lost, res.Bad = src.counts()
	return res, err
}

// lineSource is what RecordLines reads from: an ftrace instance or perf
// rings.
type lineSource interface {
	Add(system, name string) (*Format, error)
	Start() error
	Run(ctx context.Context, fn func(*Recorded) error) error
	Close() error
	counts() (events, lost, bad uint64)
}

type ftraceLineSource struct{ *Recorder }

func (s ftraceLineSource) counts() (uint64, uint64, uint64) {
	st := s.Stats()
	return st.Events, st.Lost(), st.Bad
}

type perfLineSource struct{ *PerfReader }

func (s perfLineSource) counts() (uint64, uint64, uint64) {
	st := s.Stats()
	return st.Events, st.Lost, st.Bad
}

// perfPages is the ring size in pages for kb KiB: a power of two, at
// least one.
func perfPages(kb int) int {
	n := 1
	for n*4 < kb && n < 1<<20 {
		n *= 2
	}
	return n
}
