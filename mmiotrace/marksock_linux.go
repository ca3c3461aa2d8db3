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
// stop delivers every line clients wrote before it was called, without
// depending on how fast this process runs: it connects to the socket
// itself and sends a random drain token (the listen backlog is FIFO, so
// once the token arrives every earlier client has been accepted), then
// shuts the read side of every open connection (the kernel hands over
// what is buffered, then EOF), waits for the readers, closes the listener
// and removes the socket. Lines clients write after stop are refused.
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

	var tok [16]byte
	rand.Read(tok[:])
	token := "iotap-drain-" + hex.EncodeToString(tok[:])
	var (
		mu       sync.Mutex
		conns    = map[*net.UnixConn]bool{}
		closed   bool
		wg       sync.WaitGroup
		seen     = make(chan struct{})
		seenOnce sync.Once
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.AcceptUnix()
			if err != nil {
				return // closed by stop
			}
			mu.Lock()
			if closed {
				mu.Unlock()
				c.Close()
				continue
			}
			conns[c] = true
			wg.Add(1)
			mu.Unlock()
			go func() {
				defer wg.Done()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					switch t := sc.Text(); t {
					case "":
					case token:
						seenOnce.Do(func() { close(seen) })
					default:
						mark(t)
					}
				}
				if err := sc.Err(); err != nil && !errors.Is(err, net.ErrClosed) {
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
		if c, err := net.Dial("unix", path); err == nil {
			fmt.Fprintf(c, "%s\n", token)
			c.Close()
			select {
			case <-seen:
			case <-time.After(10 * time.Second):
				logf("warning: marker socket %s: not drained after 10 s; lines sent just before the end may be missing", path)
			}
		} else {
			logf("warning: marker socket %s: drain: %v", path, err)
		}
		mu.Lock()
		closed = true
		for c := range conns {
			c.CloseRead()
		}
		mu.Unlock()
		ln.Close()
		wg.Wait()
		os.Remove(path)
	}, nil
}
