package intelpt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/iotap/iotap/internal/outfile"
)

// Record traces with opt.Trace into the capture directory dir (created
// 0700, files 0600, see CaptureInfoFile): 'iotap pt capture'. Buffers are
// drained every 50 ms while tracing (circular buffers once, at the end),
// until ctx ends, opt.Duration has passed or opt.Done delivers; then the
// sideband, capture.json and the mapped files are written. Support is probed first: on a machine
// without PT it fails with ErrNotSupported and creates nothing.
func Record(ctx context.Context, dir string, opt RecordOptions) (*RecordResult, error) {
	if _, err := Supported(); err != nil {
		return nil, err
	}
	ctx, cancel := opt.context(ctx)
	defer cancel()
	if opt.Run {
		if len(opt.Command) == 0 {
			return nil, fmt.Errorf("intelpt: Run without a Command")
		}
		g, err := startGated(opt.Command, opt.Stdin, opt.Stdout, opt.Stderr)
		if err != nil {
			return nil, err
		}
		defer g.abort()
		opt.Trace.Mode, opt.Trace.PID, opt.Trace.EnableOnExec = PerThread, g.pid(), true
		started, done := opt.Started, make(chan error, 1)
		opt.Started = func() {
			go func() { done <- <-g.release() }()
			if started != nil {
				started()
			}
		}
		opt.Done = done
	}
	cfg := opt.Trace
	tr, err := NewTrace(cfg)
	if err != nil {
		return nil, err
	}
	defer tr.Free()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	type sink struct {
		pt    *os.File
		bytes int64
		info  BufferInfo
	}
	bufs := tr.Buffers()
	sinks := make([]sink, len(bufs))
	for i, b := range bufs {
		of, err := outfile.Create(filepath.Join(dir, BufferFileName(b.CPU)+".pt"), outfile.Options{Mode: outfile.InPlace})
		if err != nil {
			return nil, err
		}
		fh := of.OS() // kept under its name whatever happens (a killed capture reads back)
		defer fh.Close()
		sinks[i].pt = fh
	}
	var scratch []byte
	drain := func(final bool) error {
		for i, b := range bufs {
			if cfg.Circular && !final {
				continue
			}
			var info BufferInfo
			var err error
			scratch, info, err = b.Drain(scratch[:0])
			if err != nil {
				return err
			}
			if _, err := sinks[i].pt.Write(scratch); err != nil {
				return err
			}
			sinks[i].bytes += int64(len(scratch))
			sinks[i].info = info
			if _, err := b.DrainSideband(); err != nil {
				return err
			}
		}
		return nil
	}
	start := time.Now()
	if err := tr.Start(); err != nil {
		return nil, err
	}
	if opt.Started != nil {
		opt.Started()
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-opt.Done:
			break loop
		case <-tick.C:
			if err := drain(false); err != nil {
				return nil, err
			}
		}
	}
	if err := tr.Stop(); err != nil {
		return nil, err
	}
	if err := drain(true); err != nil {
		return nil, err
	}
	words, dcfg := tr.Config()
	sc := &CaptureInfo{Tool: "iotap", Mode: cfg.Mode.String(), CPUs: cfg.CPUs, PID: cfg.PID, Command: opt.Command,
		Chunks: cfg.Chunks, Order: cfg.Order, Circular: cfg.Circular, PMUType: tr.PMU().Type, Config: words,
		MTCFreq: dcfg.MTCFreq, SampleType: tr.SampleType(), Filters: cfg.AddrFilters, Start: start, End: time.Now()}
	ti := TimingInfo()
	sc.CPUID15EAX, sc.CPUID15EBX, sc.NomFreq = ti.CPUID15EAX, ti.CPUID15EBX, ti.NomFreq
	if len(bufs) > 0 {
		sc.TSC = bufs[0].TSC()
	}
	res := &RecordResult{Info: sc}
	for i, b := range bufs {
		name := BufferFileName(b.CPU)
		if err := outfile.WriteFile(filepath.Join(dir, name+".sideband"), b.Sideband(), outfile.Options{}); err != nil {
			return nil, err
		}
		sb, _ := b.DrainSideband()
		sc.Buffers = append(sc.Buffers, CaptureBuffer{CPU: b.CPU, File: name + ".pt", Sideband: name + ".sideband",
			Bytes: sinks[i].bytes, Info: sinks[i].info, SB: sb})
		if sb.Lossy() {
			res.Lost = append(res.Lost, fmt.Sprintf("%s: %d truncated, %d partial, %d collision AUX records, %d lost records",
				name, sb.Truncated, sb.Partial, sb.Collision, sb.Lost))
		}
	}
	sc.Lost = len(res.Lost) > 0
	if err := WriteCaptureInfo(dir, sc); err != nil {
		return nil, err
	}
	// The files the traced code came from, with their build-ids (and
	// copies with CopyBinaries): what decoding elsewhere needs.
	sideband := &Sideband{}
	for _, b := range bufs {
		sideband.Merge(RawSideband(b.Sideband(), tr.SampleType(), true))
	}
	res.Files = MappedFiles(sideband)
	if opt.CopyBinaries {
		CopyBinaries(dir, res.Files)
	} else {
		CopyVDSO(dir, res.Files)
	}
	if err := WriteMappedFiles(dir, res.Files); err != nil {
		return nil, err
	}
	return res, nil
}
