//go:build linux

package main

import (
	"fmt"
	"io"

	"github.com/iotap/iotap/capture"
	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/tracefs"
	"github.com/spf13/cobra"
)

func newMMIOCaptureCmd(e *env) *cobra.Command {
	var (
		out, bind, driver, fifo, bundle, tracefsDir string
		sock                                        string
		marks                                       []string
		bufferKB                                    int
		force, offline, allowLoss                   bool
		rot                                         rotateFlags
	)
	c := &cobra.Command{
		Use: "capture -o FILE [flags] [-- COMMAND...]",
		Example: `  sudo iotap mmio capture --bind 0000:00:03.0 -o e1000.log.zst -- sleep 5
  sudo iotap mmio capture --bundle e1000.tar.gz --mark probe -o e1000.log
  sudo iotap mmio capture --marker-fifo /tmp/marks -o - | iotap mmio stats -
  sudo iotap mmio capture --file-size 64M --ring 4 --interval 1s -o mmio.log.zst`,
		Short: "Trace MMIO accesses with the kernel's mmiotrace tracer",
		Long: `Capture an mmiotrace log: set the buffer size, start the mmiotrace tracer
(refusing to replace another active tracer unless --force), stream
trace_pipe to FILE (mode 0600; .gz/.xz/.zst compress), write markers, then
bind a PCI device (--bind: unbound before tracing starts, bound while
tracing, so the driver's probe is recorded) and/or run COMMAND, stop the
tracer, drain the buffer and report lost events.

Without --bind and COMMAND the capture runs until Ctrl-C.

Markers from --marker-fifo and --marker-socket go through trace_marker, so
they sit among the MMIO records in the kernel's order. The socket and the
fifo exist from before the bind (a marker can land inside the probe); when
COMMAND ends they are drained: every line written before then is in the
log, before the "iotap: command done" marker. Socket clients are served one
at a time in the order they connect, so markers sent by clients one after
another keep their order; a client that stays connected holds back the
clients that connect after it until it closes.

mmiotrace only sees mappings created while it runs: trace a driver's
probe with --bind, not with ftrace=mmiotrace on the kernel command line
(the kernel refuses that).

--file-size/--file-duration split the log into files, like tshark -b:
-o x.log writes x_00001_TIME.log, x_00002_TIME.log, ... (the size counts
log bytes before compression); a new file starts between two lines and
begins with the log's VERSION and PCIDEV lines, so each file reads on its
own; --ring N keeps the newest N. --interval D prints, every D, the records
(lines but VERSION and PCIDEV) and bytes written, like perf stat -I; the
lines add up to the log's records.

Exit status 3 when events were lost (unless --allow-loss): retry with the
suggested --buffer-kb.

Examples:
  iotap mmio capture --bind 0000:00:03.0 --mark "probe" -o e1000.log
  iotap mmio capture --marker-fifo /tmp/marks -o x.log.zst -- modprobe nouveau
  iotap mmio capture --marker-socket /run/marks.sock -o x.log -- ./test.sh
      (in test.sh: echo "step 2" | socat - UNIX-CONNECT:/run/marks.sock)
  iotap mmio capture --bind 0000:01:00.0 --bundle report.tar.gz -o dump.txt
  iotap mmio capture --file-size 64M --ring 4 --interval 1s -o mmio.log.zst`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageErrorf("capture needs -o FILE")
			}
			if bundle != "" && out == "-" {
				return usageErrorf("--bundle needs the log in a file (-o FILE)")
			}
			if bufferKB < 0 {
				return usageErrorf("--buffer-kb %d: must be positive", bufferKB)
			}
			opt := mmiotrace.CaptureOptions{
				BufferKB: bufferKB, Force: force, OfflineCPUs: offline, Marks: marks,
				MarkerFIFO: fifo, MarkerSocket: sock, BindDriver: driver, Command: args,
				CommandStdout: e.stderr, CommandStderr: e.stderr,
				Interval: rot.Interval,
				Logf:     func(f string, a ...any) { fmt.Fprintf(e.stderr, "mmio capture: "+f+"\n", a...) },
			}
			if cmd.ArgsLenAtDash() > 0 {
				return usageErrorf("unexpected arguments before --: %q", args[:cmd.ArgsLenAtDash()])
			}
			if bind != "" {
				a, err := mmiotrace.ParsePCIAddr(bind)
				if err != nil {
					return usageErrorf("--bind: %v", err)
				}
				opt.Bind = &a
			}
			if driver != "" && !mmiotrace.ValidDriverName(driver) {
				return usageErrorf("--driver %q: not a driver name", driver)
			}
			if tracefsDir != "" {
				opt.FS = tracefs.New(tracefsDir)
			}
			ro, err := rot.options(out)
			if err != nil {
				return err
			}
			if ro != nil && bundle != "" {
				return usageErrorf("--bundle needs the log in one file, not --file-size/--file-duration")
			}
			opt.OnInterval = rot.onInterval(e)
			fopt := mmiotrace.FileCaptureOptions{Capture: opt, Path: out, Bundle: bundle,
				Warn: func(s string) { fmt.Fprintf(e.stderr, "iotap: warning: mmio capture: %s\n", s) },
				Create: func(path string) (io.WriteCloser, error) {
					w, closeOut, err := mmioCreateOutput(e, path, outfile.InPlace)
					return writeCloser{w, closeOut}, err
				}}
			fopt.Rotate = ro
			res, err := mmiotrace.CaptureToFile(e.ctx, fopt)
			if err != nil {
				return err
			}
			if res.CommandErr != nil {
				return fmt.Errorf("mmio capture: command failed: %w", res.CommandErr)
			}
			if loss := res.LossText(); loss != "" {
				return capture.EndLoss("mmio capture: "+loss, fmt.Sprintf(": retry with --buffer-kb %d", res.SuggestBufferKB()), allowLoss, e.warn)
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&out, "output", "o", "", "log file (mode 0600; - for stdout; .gz/.xz/.zst compress)")
	f.StringVar(&bind, "bind", "", "PCI device (0000:00:03.0) to unbind before and bind while tracing")
	f.StringVar(&driver, "driver", "", "driver to bind --bind to (default: the one it had, else drivers_probe)")
	f.StringArrayVar(&marks, "mark", nil, "marker written when tracing starts (repeatable)")
	f.StringVar(&fifo, "marker-fifo", "", "named pipe (created 0600 if missing): each line becomes a marker")
	f.StringVar(&sock, "marker-socket", "", "unix socket (created 0600, removed at the end): each line a client writes becomes a marker")
	f.IntVar(&bufferKB, "buffer-kb", 0, "per-CPU ring buffer size in KiB (default: keep the current)")
	f.BoolVar(&force, "force", false, "replace another active tracer")
	f.BoolVar(&offline, "offline-cpus", false, "take all CPUs but one offline while tracing (brought back afterwards)")
	f.StringVar(&bundle, "bundle", "", "also write a tar.gz with the log, lspci -vvv, dmesg, the PCI device list, /proc/kallsyms and /proc/modules")
	f.BoolVar(&allowLoss, "allow-loss", false, "exit 0 even when events were lost")
	f.StringVar(&tracefsDir, "tracefs", "", "tracefs mount (default: found in /proc/self/mountinfo)")
	rot.add(f, ".log", "records and bytes")
	return c
}

// writeCloser is a Writer completed by close.
type writeCloser struct {
	io.Writer
	close func() error
}

func (w writeCloser) Close() error { return w.close() }
