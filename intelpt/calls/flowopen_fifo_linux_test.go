package calls

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/internal/mapfile/mapfiletest"
)

// TestOpenFlowFIFO: a named pipe is refused by its mode, not opened: a
// perf.data is read by offsets, and OpenFlow used to open the pipe once
// to read its head and then again, which waits for a writer for ever
// (the writer gone after the first reading). Here no writer ever comes:
// opening it at all would block.
func TestOpenFlowFIFO(t *testing.T) {
	fifo := mapfiletest.FIFO(t)
	done := make(chan error, 1)
	go func() {
		_, err := OpenFlow(fifo, FlowOptions{Stream: -1})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), fifo+" is not a regular file") {
			t.Errorf("OpenFlow of a named pipe: %v", err)
		}
	case <-time.After(10 * time.Second):
		// Release the open that waits for a writer (O_RDWR does not block).
		if w, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatal("OpenFlow opened the named pipe and waited for a writer")
	}
}

// TestJobOpenRawFIFO: pt calls' raw trace on a named pipe is copied to a
// temporary file and mapped (intelpt.MapFileRange), as pt flow's is, not
// read whole into memory; its calls are those of the file.
func TestJobOpenRawFIFO(t *testing.T) {
	const lib = "../testdata/libipt/"
	trace, err := os.ReadFile(lib + "call_direct-ret_compressed.pt")
	if err != nil {
		t.Fatal(err)
	}
	fifo := mapfiletest.FIFO(t)
	mapfiletest.FeedFIFO(fifo, trace, 20*time.Second)
	j := Job{Raw: []string{lib + "call_direct-ret_compressed.bin:0x100000"}, MaxDepth: DefaultTreeDepth}
	in, o, err := j.Open(fifo)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if in.mapped == nil {
		t.Error("the raw trace on a pipe was read into memory, not mapped from a copy")
	}
	res, err := Run(io.Discard, in, fifo, OutputNone, o)
	if err != nil || res.Stats.Insns != 3 || res.Stats.Calls != 1 {
		t.Errorf("calls of the trace on a pipe: %v, %v; want those of the file (3 instructions, 1 call)", res, err)
	}
}
