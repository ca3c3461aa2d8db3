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
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}
