// Command iotap traces what happens at the hardware and kernel boundary on
// Linux: USB (usbmon), MMIO (mmiotrace), user_events and Intel Processor Trace.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal cancels ctx: the command stops, removes its
	// partial outputs and exits 130; an open of a named pipe waiting for
	// its other end is woken (run). The signals of the next second are
	// the same interruption (timeout(1) signals the command, then its
	// process group); one after it kills the process as without iotap's
	// handler, should a command be blocked where ctx is not looked at
	// (a read of a pipe whose writer is silent).
	go func() {
		<-ctx.Done()
		time.Sleep(time.Second)
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}
