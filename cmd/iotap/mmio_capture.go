package main

import (
	"fmt"
	"io"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/spf13/cobra"
)

func newMMIOCaptureCmd(e *env) *cobra.Command {
	var (
		a         mmiotrace.CaptureArgs
		allowLoss lossFlag
		rot       rotateFlags
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
			if cmd.ArgsLenAtDash() > 0 {
				return usageErrorf("unexpected arguments before --: %q", args[:cmd.ArgsLenAtDash()])
			}
			fopt, err := a.FileOptions(rot.Args)
			if err != nil {
				return usageErrorf("%v", err)
			}
			fopt.Capture.Command, fopt.Capture.CommandStdout, fopt.Capture.CommandStderr = args, e.stderr, e.stderr
			fopt.Capture.OnInterval = rot.onInterval(e)
			fopt.Capture.Logf = func(f string, a ...any) { fmt.Fprintf(e.stderr, "iotap: mmio capture: "+f+"\n", a...) }
			fopt.Warn = func(s string) { e.warn("mmio capture: " + s) }
			fopt.Create = mmiotrace.Compressed(func(path string) (io.WriteCloser, error) {
				w, err := commitCreate(e)(path)
				if err != nil {
					return nil, fmt.Errorf("mmio: %w", err)
				}
				return w, nil
			})
			res, err := mmiotrace.CaptureToFile(e.ctx, fopt)
			if err != nil {
				return err
			}
			if res.CommandErr != nil {
				return fmt.Errorf("mmio capture: command failed: %w", res.CommandErr)
			}
			if loss := res.LossText(); loss != "" {
				return allowLoss.end(e, "mmio capture: "+loss, fmt.Sprintf(": retry with --buffer-kb %d", res.SuggestBufferKB()))
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&a.Path, "output", "o", "", "log file (mode 0600; - for stdout; .gz/.xz/.zst compress)")
	f.StringVar(&a.Bind, "bind", "", "PCI device (0000:00:03.0) to unbind before and bind while tracing")
	f.StringVar(&a.Capture.BindDriver, "driver", "", "driver to bind --bind to (default: the one it had, else drivers_probe)")
	f.StringArrayVar(&a.Capture.Marks, "mark", nil, "marker written when tracing starts (repeatable)")
	f.StringVar(&a.Capture.MarkerFIFO, "marker-fifo", "", "named pipe (created 0600 if missing): each line becomes a marker")
	f.StringVar(&a.Capture.MarkerSocket, "marker-socket", "", "unix socket (created 0600, removed at the end): each line a client writes becomes a marker")
	f.IntVar(&a.Capture.BufferKB, "buffer-kb", 0, "per-CPU ring buffer size in KiB (default: keep the current)")
	f.BoolVar(&a.Capture.Force, "force", false, "replace another active tracer")
	f.BoolVar(&a.Capture.OfflineCPUs, "offline-cpus", false, "take all CPUs but one offline while tracing (brought back afterwards)")
	f.StringVar(&a.Bundle, "bundle", "", "also write a tar.gz with the log, lspci -vvv, dmesg, the PCI device list, /proc/kallsyms and /proc/modules")
	allowLoss.add(f, "exit 0 even when events were lost")
	f.StringVar(&a.TraceFS, "tracefs", "", "tracefs mount (default: found in /proc/self/mountinfo)")
	rot.add(f, ".log", "records and bytes")
	return linuxOnly(c)
}
