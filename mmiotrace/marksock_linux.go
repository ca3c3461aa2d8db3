package mmiotrace

import (
	"bufio"
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
// at path is replaced; any other file there is an error. stop closes the
// listener, gives open connections a moment to deliver what they already
// wrote, closes them and removes the socket.
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

	var (
		mu     sync.Mutex
		conns  = map[net.Conn]bool{}
		closed bool
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by stop
			}
			mu.Lock()
			if closed {
				mu.Unlock()
				c.Close()
				return
			}
			conns[c] = true
			wg.Add(1)
			mu.Unlock()
			go func() {
				defer wg.Done()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					if t := sc.Text(); t != "" {
						mark(t)
					}
				}
				if err := sc.Err(); err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, os.ErrDeadlineExceeded) {
					logf("warning: marker socket %s: %v", path, err)
				}
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
				c.Close()
			}()
		}
	}()
	return func() {
		mu.Lock()
		closed = true
		for c := range conns {
			c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		}
		mu.Unlock()
		ln.Close()
		wg.Wait()
		os.Remove(path)
	}, nil
}
