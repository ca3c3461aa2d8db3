package mmiotrace

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"os"
	"time"
)

// serveMarkerFIFO calls mark for every non-empty line written to the named
// pipe f (opened read-write, so that it never reports EOF). stop delivers
// every line written before it was called: it writes a random drain token
// into the pipe itself and waits until the reader reaches it (a pipe keeps
// the order of writes), then closes f.
func serveMarkerFIFO(f *os.File, mark func(string), logf func(string, ...any)) (stop func()) {
	var tok [16]byte
	rand.Read(tok[:])
	token := "iotap-drain-" + hex.EncodeToString(tok[:])
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			switch t := sc.Text(); t {
			case "":
			case token:
				return
			default:
				mark(t)
			}
		}
	}()
	return func() {
		if _, err := f.WriteString("\n" + token + "\n"); err != nil {
			logf("warning: marker fifo %s: drain: %v", f.Name(), err)
		} else {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				logf("warning: marker fifo %s: not drained after 10 s; lines written just before the end may be missing", f.Name())
			}
		}
		f.Close()
		<-done
	}
}
