//go:build linux

package mmiotrace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	iunix "github.com/iotap/iotap/internal/unix"
	"github.com/iotap/iotap/rotate"
	"github.com/iotap/iotap/tracefs"
)

// Capture runs mmiotrace and streams trace_pipe to out until the command
// and bind are done, or, when there are neither, until ctx is cancelled.
// It restores the tracer (nop), tracing_on, the buffer size and the CPUs
// it took offline, also when ctx is cancelled. Losses are reported in the
// result, not as an error.
func Capture(ctx context.Context, out io.Writer, opt CaptureOptions) (res CaptureResult, err error) {
	fs := opt.FS
	if fs == nil {
		if fs, err = tracefs.Find(); err != nil {
			return res, fmt.Errorf("mmiotrace: %w: %w (mount it: mount -t tracefs nodev /sys/kernel/tracing)", ErrNotSupported, err)
		}
	}
	if opt.Sysfs.Root == "" {
		opt.Sysfs = DefaultSysfs
	}
	has, err := fs.HasTracer("mmiotrace")
	if errors.Is(err, os.ErrPermission) {
		return res, fmt.Errorf("mmiotrace: available_tracers: %w (tracing needs root, or CAP_SYS_ADMIN and access to %s)", err, fs.Root())
	}
	if err != nil {
		return res, fmt.Errorf("mmiotrace: available_tracers: %w", err)
	}
	if !has {
		return res, fmt.Errorf("mmiotrace: %w: the kernel has no mmiotrace tracer (build it with CONFIG_MMIOTRACE=y; x86 only)", ErrNotSupported)
	}
	cur, err := fs.CurrentTracer()
	if err != nil {
		return res, fmt.Errorf("mmiotrace: current_tracer: %w", err)
	}
	if cur != "nop" {
		if !opt.Force {
			return res, fmt.Errorf("mmiotrace: %w: tracer %q is active; stop it (echo nop > current_tracer) or use --force", ErrBusy, cur)
		}
		opt.logf("replacing the active tracer %q (--force); it is left as nop afterwards", cur)
	}

	var undo []func()
	defer func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}()

	// CPUs.
	cpuDir := filepath.Join(opt.Sysfs.Root, "devices", "system", "cpu")
	cpus, cerr := tracefs.OnlineCPUs(filepath.Join(cpuDir, "online"))
	res.OnlineCPUs = len(cpus)
	if cerr == nil && len(cpus) > 1 {
		if opt.OfflineCPUs {
			for _, c := range cpus[1:] {
				p := filepath.Join(cpuDir, "cpu"+strconv.Itoa(c), "online")
				if err := writeExisting(p, "0"); err != nil {
					return res, fmt.Errorf("mmiotrace: take cpu%d offline: %w", c, err)
				}
				undo = append(undo, func() {
					if err := writeExisting(p, "1"); err != nil {
						opt.logf("warning: could not bring cpu%d back online: %v", c, err)
					}
				})
			}
			res.OnlineCPUs = 1
			opt.logf("took %d CPUs offline; they come back when the capture ends", len(cpus)-1)
		} else {
			opt.logf("warning: %d CPUs online: mmiotrace is reliable on one CPU only (the kernel tries to take the others offline while it runs; accesses racing on another CPU are missed without notice); --offline-cpus takes them offline first", len(cpus))
		}
	}

	// Buffer size.
	oldKB, err := fs.BufferSizeKB()
	if err != nil {
		return res, fmt.Errorf("mmiotrace: buffer_size_kb: %w", err)
	}
	res.BufferKB = oldKB
	if opt.BufferKB > 0 && opt.BufferKB != oldKB {
		if err := fs.SetBufferSizeKB(opt.BufferKB); err != nil {
			return res, err
		}
		res.BufferKB = opt.BufferKB
		undo = append(undo, func() { fs.SetBufferSizeKB(oldKB) })
	}

	// Unbind first so that the log starts with the probe.
	var prevDriver string
	if opt.Bind != nil {
		if prevDriver, err = opt.Sysfs.Unbind(*opt.Bind); err != nil {
			return res, err
		}
		if prevDriver != "" {
			opt.logf("unbound %s from %s", opt.Bind, prevDriver)
			undo = append(undo, func() {
				if d, _ := opt.Sysfs.Driver(*opt.Bind); d == "" {
					opt.Sysfs.Bind(*opt.Bind, prevDriver)
				}
			})
		}
	}

	wasOn, err := fs.TracingOn()
	if err != nil {
		return res, fmt.Errorf("mmiotrace: tracing_on: %w", err)
	}
	if !wasOn {
		if err := fs.SetTracingOn(true); err != nil {
			return res, err
		}
	}
	undo = append(undo, func() { fs.SetTracingOn(wasOn) })
	if err := fs.SetTracer("mmiotrace"); err != nil {
		return res, err
	}
	tracerSet := true
	stopTracer := func() {
		if tracerSet {
			tracerSet = false
			if err := fs.SetTracer("nop"); err != nil {
				opt.logf("warning: could not stop mmiotrace: %v", err)
			}
		}
	}
	undo = append(undo, stopTracer)

	pipe, err := fs.OpenTracePipe()
	if err != nil {
		return res, fmt.Errorf("mmiotrace: open trace_pipe: %w", err)
	}
	var pipeOnce sync.Once
	closePipe := func() { pipeOnce.Do(func() { pipe.Close() }) }
	undo = append(undo, closePipe)
	copied := make(chan copyStats, 1)
	var iv *rotate.Interval
	if opt.Interval > 0 && opt.OnInterval != nil {
		iv = rotate.StartInterval(opt.Interval, opt.OnInterval)
	}
	go func() {
		st := copyLog(out, pipe, iv)
		iv.Stop()
		copied <- st
	}()

	for _, m := range opt.Marks {
		if err := fs.WriteMarker(m); err != nil {
			return res, err
		}
	}
	// Marker sources are drained (every line written before the command
	// ended is in the log, before "iotap: command done") and closed before
	// tracing stops; stopMarkers also runs on early returns.
	var markerStops []func()
	var markersOnce sync.Once
	stopMarkers := func() {
		markersOnce.Do(func() {
			for i := len(markerStops) - 1; i >= 0; i-- {
				markerStops[i]()
			}
		})
	}
	if opt.MarkerFIFO != "" {
		f, created, err := openFIFO(opt.MarkerFIFO)
		if err != nil {
			return res, err
		}
		if created {
			undo = append(undo, func() { os.Remove(opt.MarkerFIFO) })
		}
		markerStops = append(markerStops, serveMarkerFIFO(f, func(t string) {
			if err := fs.WriteMarker(t); err != nil {
				opt.logf("warning: marker from %s: %v", opt.MarkerFIFO, err)
			}
		}, opt.logf))
		undo = append(undo, stopMarkers)
		opt.logf("markers: write lines to %s", opt.MarkerFIFO)
	}

	if opt.MarkerSocket != "" {
		stop, err := serveMarkerSocket(opt.MarkerSocket, func(t string) {
			if err := fs.WriteMarker(t); err != nil {
				opt.logf("warning: marker from %s: %v", opt.MarkerSocket, err)
			}
		}, opt.logf)
		if err != nil {
			return res, err
		}
		markerStops = append(markerStops, stop)
		undo = append(undo, stopMarkers)
		opt.logf("markers: write lines to the unix socket %s", opt.MarkerSocket)
	}

	if opt.Bind != nil {
		drv := opt.BindDriver
		if drv == "" {
			drv = prevDriver
		}
		fs.WriteMarker("iotap: bind " + opt.Bind.String() + " " + cmpOr(drv, "(drivers_probe)"))
		if err := opt.Sysfs.Bind(*opt.Bind, drv); err != nil {
			return res, err
		}
		now, _ := opt.Sysfs.Driver(*opt.Bind)
		fs.WriteMarker("iotap: bound " + opt.Bind.String() + " " + cmpOr(now, "(no driver)"))
		opt.logf("bound %s to %s", opt.Bind, cmpOr(now, "no driver"))
	}
	if len(opt.Command) > 0 {
		cmd := exec.CommandContext(ctx, opt.Command[0], opt.Command[1:]...)
		cmd.Stdout, cmd.Stderr = opt.CommandStdout, opt.CommandStderr
		fs.WriteMarker("iotap: run " + opt.Command[0])
		res.CommandErr = cmd.Run()
		stopMarkers()
		fs.WriteMarker("iotap: command done")
	}
	if opt.Bind == nil && len(opt.Command) == 0 {
		opt.logf("tracing; stop with Ctrl-C")
		<-ctx.Done()
	}
	stopMarkers()

	// Stop recording, drain what the buffer holds, read the loss counters,
	// then switch to nop (which clears the buffer).
	fs.SetTracingOn(false)
	drainPipe(fs, copied, closePipe)
	var st copyStats
	select {
	case st = <-copied:
		copied <- st
	case <-time.After(5 * time.Second):
		return res, fmt.Errorf("mmiotrace: trace_pipe did not close after tracing stopped; the log may lack its end")
	}
	if lost, err := fs.TotalLost(); err == nil {
		res.Overruns = lost
	}
	stopTracer()
	res.Bytes, res.Lines, res.LostMarks = st.bytes, st.lines, st.lost
	if st.err != nil {
		return res, fmt.Errorf("mmiotrace: writing the log: %w", st.err)
	}
	return res, nil
}

// drainPipe waits until the ring buffers are empty (everything was read),
// then closes trace_pipe, whose reads never report EOF in non-blocking mode.
func drainPipe(fs *tracefs.FS, copied chan copyStats, closePipe func()) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case st := <-copied:
			copied <- st
			return
		case <-time.After(50 * time.Millisecond):
		}
		if entries(fs) == 0 {
			time.Sleep(100 * time.Millisecond)
			break
		}
	}
	closePipe()
}

func entries(fs *tracefs.FS) uint64 {
	cpus, err := fs.CPUs()
	if err != nil {
		return 0
	}
	var n uint64
	for _, c := range cpus {
		if s, err := fs.CPUStats(c); err == nil {
			n += s.Entries
		}
	}
	return n
}

type copyStats struct {
	bytes, lines int64
	lost         uint64
	err          error
}

// copyLog copies the pipe to out, counting lines and lost-events marks,
// and the records in iv (nil: not counted).
func copyLog(out io.Writer, pipe io.Reader, iv *rotate.Interval) copyStats {
	var st copyStats
	buf := make([]byte, 256<<10)
	var partial []byte
	var rec Record
	for {
		n, err := pipe.Read(buf)
		if n > 0 {
			if _, werr := out.Write(buf[:n]); werr != nil {
				st.err = werr
				return st
			}
			st.bytes += int64(n)
			data := buf[:n]
			for {
				i := bytes.IndexByte(data, '\n')
				if i < 0 {
					partial = append(partial, data...)
					break
				}
				line := data[:i]
				if len(partial) > 0 {
					line = append(partial, line...)
					partial = partial[:0]
				}
				st.lines++
				if iv != nil && !IsHeaderLine(line) {
					iv.Add(1, uint64(len(line)+1))
				}
				if bytes.HasPrefix(line, []byte("MARK ")) && ParseLine(line, &rec) == nil {
					if k, ok := rec.Lost(); ok {
						st.lost += k
					}
				}
				data = data[i+1:]
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				st.err = err
			}
			return st
		}
	}
}

// openFIFO opens (creating if missing, mode 0600) a named pipe for reading
// without blocking on writers.
func openFIFO(path string) (*os.File, bool, error) {
	created := false
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := iunix.Mkfifo(path, 0o600); err != nil {
			return nil, false, fmt.Errorf("mmiotrace: marker fifo: %w", err)
		}
		created = true
	case err != nil:
		return nil, false, fmt.Errorf("mmiotrace: marker fifo: %w", err)
	case fi.Mode()&os.ModeNamedPipe == 0:
		return nil, false, fmt.Errorf("mmiotrace: marker fifo %s exists and is not a named pipe", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, created, fmt.Errorf("mmiotrace: marker fifo: %w", err)
	}
	return f, created, nil
}
