package mapfile

import (
	"context"
	"os"
	"sync/atomic"
	"time"

	iunix "github.com/iotap/iotap/internal/unix"
)

// Opening a named pipe blocks until the other end is opened too: a
// reader of a FIFO that has no writer waits in open(2), where no context
// is looked at, so cancelling the work (SIGINT, SIGTERM) does not end it.

// WakeFIFOs returns at once and, once ctx is done, wakes the opens of
// the named pipes among paths that wait for their other end
// (unix.WakeFIFO: a reader then reads the end of its input, a writer a
// closed pipe), looking every 50 ms, for the opens that come later,
// until stop is called. It wakes them only while a thread of the process
// waits in such an open (unix.WaitingForFIFO), so a pipe in use (a
// capture writing to a reader) is left alone. stop reports whether a
// named pipe was woken (then what the work returned is a consequence of
// the interruption). Paths that are not named pipes are left alone; on
// systems other than Linux nothing is woken.
func WakeFIFOs(ctx context.Context, paths []string) (stop func() (woke bool)) {
	done, finished := make(chan struct{}), make(chan struct{})
	var woke atomic.Bool
	go func() {
		defer close(finished)
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		var fifos []string
		for _, p := range paths {
			if st, err := os.Stat(p); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
				fifos = append(fifos, p)
			}
		}
		if len(fifos) == 0 {
			return
		}
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if iunix.WaitingForFIFO() {
				for _, p := range fifos {
					if iunix.WakeFIFO(p) {
						woke.Store(true)
					}
				}
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() bool {
		close(done)
		<-finished
		return woke.Load()
	}
}
