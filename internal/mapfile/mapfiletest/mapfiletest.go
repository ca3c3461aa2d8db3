// Package mapfiletest helps tests cut an input shorter while it is read
// (a log still being written, copied, rotated or truncated by another
// process), for the readers that must report it (package mapfile).
package mapfiletest

import (
	"bytes"
	"os"
	"testing"
)

// CutOnWrite is an output that cuts the file at Path to Size bytes at
// its Write after the first Skip ones, and keeps what is written in Buf
// (with Discard, only counts it in N):
// given as the output of a job that reads Path, it truncates the input
// under the reader at a point of the reading the test chooses.
type CutOnWrite struct {
	T       testing.TB
	Path    string
	Size    int64
	Skip    int
	Discard bool
	Buf     bytes.Buffer
	N       int64 // the bytes written

	n int
}

// Write cuts the file at the Skip+1-th call, then keeps b.
func (w *CutOnWrite) Write(b []byte) (int, error) {
	if w.n++; w.n == w.Skip+1 {
		if err := os.Truncate(w.Path, w.Size); err != nil {
			w.T.Fatal(err)
		}
	}
	w.N += int64(len(b))
	if w.Discard {
		return len(b), nil
	}
	return w.Buf.Write(b)
}

// Cut reports whether the file was cut (a Write came).
func (w *CutOnWrite) Cut() bool { return w.n > w.Skip }
