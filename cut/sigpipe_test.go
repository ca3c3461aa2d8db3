//go:build unix

package cut_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/internal/timerange"
)

// openCut cuts [0.18 s, 0.19 s) of the lab's e1000 bind log into ws and
// returns the cut's path, which exists.
func openCut(t testing.TB, ws *cut.Windows) string {
	spec, err := timerange.ParseSpec("0.18s", "0.19s")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ws.Open(context.Background(), "../mmiotrace/testdata/e1000-bind.log", spec, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// closedPipe is the write end of a pipe whose reader has gone.
func closedPipe(t testing.TB) *os.File {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Cleanup(func() { w.Close() })
	return w
}

// TestBrokenPipe: a write to a pipe whose reader has gone removes the cut
// and calls broken once, and returns the write's EPIPE (the process goes
// on: the package does not exit); other write errors and good writes
// leave the cut alone.
func TestBrokenPipe(t *testing.T) {
	var ws cut.Windows
	defer ws.Close()
	p := openCut(t, &ws)

	calls := 0
	broken := func() { calls++ }
	good, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.BrokenPipe(good, broken).Write([]byte("record\n")); err != nil || calls != 0 {
		t.Fatalf("good write: %v, broken called %d times", err, calls)
	}
	good.Close()
	if _, err := ws.BrokenPipe(good, broken).Write([]byte("record\n")); !errors.Is(err, os.ErrClosed) || calls != 0 {
		t.Fatalf("write to a closed file: %v, broken called %d times", err, calls)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the cut is gone after writes that are not to a broken pipe: %v", err)
	}

	n, err := ws.BrokenPipe(closedPipe(t), broken).Write([]byte("record\n"))
	if !errors.Is(err, syscall.EPIPE) || n != 0 {
		t.Errorf("write to a closed pipe: %d, %v; want 0, EPIPE", n, err)
	}
	if calls != 1 {
		t.Errorf("broken called %d times, want 1", calls)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("the cut %s is left after the broken pipe: %v", p, err)
	}
}

// A reader of a window whose output pipe is closed ('iotap mmio read
// --from 1s big.log | head -1') removes its cuts before it ends; here
// broken only says so.
func ExampleWindows_BrokenPipe() {
	var ws cut.Windows
	defer ws.Close()
	spec, _ := timerange.ParseSpec("0.18s", "0.19s")
	p, err := ws.Open(context.Background(), "../mmiotrace/testdata/e1000-bind.log", spec, func(string) {})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, w, _ := os.Pipe()
	r.Close() // head -1 has exited
	out := ws.BrokenPipe(w, func() { fmt.Println("reader gone") })
	_, err = fmt.Fprintln(out, "R 4 8.288891 1 0xfebc0008 0x80080783 0x0 0")
	_, statErr := os.Stat(p)
	fmt.Println(errors.Is(err, syscall.EPIPE), os.IsNotExist(statErr))
	// Output:
	// reader gone
	// true true
}
