package cut

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// RemoveOnSIGPIPE removes the cuts of ws when a write to a closed pipe
// ('iotap mmio read --from 1s big.log | head -1') would kill the process
// and leave them behind, then exits as that signal would (status
// 128+13). Call the function it returns with the command's error to stop
// watching: an error of a write to a closed pipe (EPIPE) exits the same
// way.
func RemoveOnSIGPIPE(ws []*Windowed) func(error) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGPIPE)
	stop := make(chan struct{})
	exit := func() {
		for _, w := range ws {
			w.Close()
		}
		os.Exit(128 + 13)
	}
	go func() {
		select {
		case <-ch:
			exit()
		case <-stop:
		}
	}()
	return func(err error) {
		signal.Stop(ch)
		close(stop)
		if errors.Is(err, syscall.EPIPE) {
			exit()
		}
	}
}
