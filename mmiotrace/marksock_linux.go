package mmiotrace

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// serveMarkerSocket listens on a unix stream socket at path and calls mark
// for every non-empty line a client writes. The socket is created with
// mode 0600 before anyone can connect: it is bound in a private (0700)
// directory beside path, made 0600, then renamed to path. A stale socket
// at path is replaced; any other file there is an error.
//
// Clients are served one at a time, in the order they connected, so lines
// sent by clients one after another are marked in that order; a client
// that keeps its connection open holds back those that connect after it
// until it closes (or the capture ends).
//
// stop delivers every line clients wrote before it was called, without
// depending on how fast this process runs: it connects to the socket
// itself from a random address (the listen backlog is FIFO, so once that
// connection is accepted every earlier client has been), then shuts the
// read side of every open connection (the kernel hands over what is
// buffered, then EOF), waits for the reader, closes the listener and
// removes the socket. Lines clients write after stop are refused.
func serveMarkerSocket(path string, mark func(string), logf func(string, ...any)) (stop func(), err error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("mmiotrace: marker socket %s exists and is not a socket", path)
		}
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil, fmt.Errorf("mmiotrace: marker socket %s is in use by another process", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("mmiotrace: marker socket: %w", err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("mmiotrace: marker socket: %w", err)
	}
	dir, err := os.MkdirTemp(filepath.Dir(path), ".iotap-marks-")
	if err != nil {
		return nil, fmt.Errorf("mmiotrace: marker socket: %w", err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("mmiotrace: marker socket: %w", err)
	}
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("mmiotrace: marker socket: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		ln.Close()
		return nil, fmt.Errorf("mmiotrace: marker socket: %w", err)
	}

	// The drain connection binds to a random abstract address, so the
	// accept loop knows it without reading from it.
	var tok [16]byte
	rand.Read(tok[:])
	drainAddr := &net.UnixAddr{Name: "@iotap-drain-" + hex.EncodeToString(tok[:]), Net: "unix"}
	var (
		mu     sync.Mutex
		open   = map[*net.UnixConn]bool{} // accepted, not yet served to EOF
		closed bool
		queue  = make(chan *net.UnixConn, 256)
		seen   = make(chan struct{})
		wg     sync.WaitGroup
	)
	// Connections are served one at a time in the order they were
	// accepted: lines from a client that connected (and wrote) before
	// another are marked first, whatever the goroutine scheduling.
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(queue)
		drained := false
		for {
			c, err := ln.AcceptUnix()
			if err != nil {
				return // closed by stop
			}
			if a := c.RemoteAddr(); !drained && a != nil && a.String() == drainAddr.Name {
				drained = true
				c.Close()
				close(seen)
				continue
			}
			mu.Lock()
			if closed {
				mu.Unlock()
				c.Close()
				continue
			}
			open[c] = true
			mu.Unlock()
			queue <- c
		}
	}()
	go func() {
		defer wg.Done()
		for c := range queue {
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				if t := sc.Text(); t != "" {
					mark(t)
				}
			}
			if err := sc.Err(); err != nil && !errors.Is(err, net.ErrClosed) {
				logf("warning: marker socket %s: %v", path, err)
			}
			mu.Lock()
			delete(open, c)
			mu.Unlock()
			c.Close()
		}
	}()
	return func() {
		if c, err := net.DialUnix("unix", drainAddr, &net.UnixAddr{Name: path, Net: "unix"}); err == nil {
			c.Close()
			select {
			case <-seen:
			case <-time.After(10 * time.Second):
				logf("warning: marker socket %s: not drained after 10 s; lines sent just before the end may be missing", path)
			}
		} else {
			logf("warning: marker socket %s: drain: %v", path, err)
		}
		// Every client that connected before the drain connection is
		// accepted: shut their read sides (the kernel hands over what
		// they wrote, then EOF) and serve them to the end.
		mu.Lock()
		closed = true
		for c := range open {
			c.CloseRead()
		}
		mu.Unlock()
		ln.Close()
		wg.Wait()
		os.Remove(path)
	}, nil
}
