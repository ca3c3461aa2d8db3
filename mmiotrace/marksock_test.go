//go:build linux

package mmiotrace

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

func TestMarkerSocket(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "marks.sock")
	var mu sync.Mutex
	var got []string
	stop, err := serveMarkerSocket(p, func(s string) { mu.Lock(); got = append(got, s); mu.Unlock() }, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v, %v: want a 0600 socket", fi, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left beside the socket: %v", ents)
	}
	// A second capture cannot take a socket in use.
	if _, err := serveMarkerSocket(p, func(string) {}, t.Logf); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("socket in use: %v", err)
	}
	// Clients one after another and at once; empty lines are ignored.
	send := func(lines ...string) {
		c, err := net.Dial("unix", p)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		fmt.Fprint(c, strings.Join(lines, "\n")+"\n")
	}
	send("first", "", "second")
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); send(fmt.Sprintf("client %d", i)) }()
	}
	wg.Wait()
	// A client still connected when the capture stops and one that
	// connected, wrote and hung up just before: what they wrote is
	// delivered, however late this process gets to read it.
	c, err := net.Dial("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(c, "last words\n")
	send("just before the end")
	stop()
	c.Close()
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Errorf("socket not removed: %v", err)
	}
	sort.Strings(got)
	want := []string{"client 0", "client 1", "client 2", "client 3", "first", "just before the end", "last words", "second"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("markers %q, want %q", got, want)
	}

	// A stale socket (no listener) is replaced; a regular file is refused.
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	stop, err = serveMarkerSocket(p, func(string) {}, t.Logf)
	if err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	stop()
	os.WriteFile(p, []byte("x"), 0o600)
	if _, err := serveMarkerSocket(p, func(string) {}, t.Logf); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("regular file: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "x" {
		t.Error("regular file clobbered")
	}
}

// TestMarkerFIFODrain checks that stop delivers every line written to the
// pipe before it, in order, and then closes the pipe.
func TestMarkerFIFODrain(t *testing.T) {
	p := filepath.Join(t.TempDir(), "marks")
	f, _, err := openFIFO(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	stop := serveMarkerFIFO(f, func(s string) { got = append(got, s) }, t.Logf)
	w, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		fmt.Fprintf(w, "line %d\n\n", i)
	}
	w.Close()
	stop()
	if len(got) != 100 || got[0] != "line 0" || got[99] != "line 99" {
		t.Errorf("%d markers (%q ... ), want line 0 ... line 99", len(got), got[:min(len(got), 3)])
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Error("fifo still open after stop")
	}
}

// TestMarkerSocketOrder checks that lines from clients that connect one
// after another are marked in that order, also when a client that
// connected earlier is still open.
func TestMarkerSocketOrder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "marks.sock")
	var got []string
	stop, err := serveMarkerSocket(p, func(s string) { got = append(got, s) }, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 0; i < 50; i++ {
		c, err := net.Dial("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "step %d\n", i)
		c.Close()
		want = append(want, fmt.Sprintf("step %d", i))
	}
	stop()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("markers in the order %q, want %q", got, want)
	}
}
