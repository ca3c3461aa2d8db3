// Command iotap traces what happens at the hardware and kernel boundary on
// Linux: USB (usbmon), MMIO (mmiotrace), user_events and Intel Processor Trace.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal cancels ctx: the command stops, removes its
	// partial outputs and exits 130. A second one kills the process as
	// without iotap's handler: a command blocked where ctx is not looked
	// at (opening a named pipe that has no writer) still ends.
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}
