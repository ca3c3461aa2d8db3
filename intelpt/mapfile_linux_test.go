package intelpt_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"

	. "github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/internal/ptgen"
	"github.com/iotap/iotap/internal/mapfile"
	"github.com/iotap/iotap/internal/mapfile/mapfiletest"
	iunix "github.com/iotap/iotap/internal/unix"
)

// TestMappedTraceDropBehind: pt flow's path for a raw trace file (mapped,
// its pages dropped behind the decoder's progress) lists exactly what
// the in-memory path (ReadFileRange) lists, and never reads a dropped
// page again: each dropped range is made unreadable (PROT_NONE), so a
// later read would fault (a panic, with SetPanicOnFault). The range
// starts off a page boundary inside the file.
func TestMappedTraceDropBehind(t *testing.T) {
	p, err := ptgen.Generate(ptgen.Config{Seed: 9, Insns: 1_500_000, Timing: true})
	if err != nil {
		t.Fatal(err)
	}
	im := NewImage()
	if _, err := im.Add(p.Code, p.Base, ASID{CR3: AnyASID, VMCS: AnyASID}, "code"); err != nil {
		t.Fatal(err)
	}
	const prefix = 1000 // junk before the range
	small := writeTrace(t, "small.pt", prefix, p.Trace, 1)
	// Several MiB: the trace repeated (each copy starts with a PSB).
	large := writeTrace(t, "large.pt", prefix, p.Trace, (3<<20)/len(p.Trace)+1)
	for _, c := range []struct {
		name  string
		file  string
		size  int
		quiet bool
		block bool
		lag   int64
	}{
		{"listing/insn", small, len(p.Trace), false, false, 16 << 10},
		{"listing/block", small, len(p.Trace), false, true, 16 << 10},
		{"several MiB/insn", large, 0, true, false, DropLag},
		{"several MiB/block", large, 0, true, true, DropLag},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true)) // a read of a dropped page
			cfg := FlowConfig{Image: im}
			o := FlowOptions{Quiet: c.quiet, BlockDecoder: c.block}
			data, err := ReadFileRange(c.file, prefix, uint64(c.size))
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			wantSt, err := FlowListing(&want, data, cfg, o)
			if err != nil {
				t.Fatal(err)
			}
			if wantSt.Insns < 1_000_000 || !c.quiet && want.Len() < 1<<20 {
				t.Fatalf("%d instructions, a %d-byte listing: the test needs more", wantSt.Insns, want.Len())
			}
			m, err := MapFileRange(c.file, prefix, uint64(c.size))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if !m.Mapped() || !bytes.Equal(m.Data, data) {
				t.Fatalf("mapped %v, %d bytes: want the %d bytes of the range, mapped", m.Mapped(), len(m.Data), len(data))
			}
			var dropped [][2]int
			SetDropHook(m, c.lag, func(b []byte, from, to int) {
				dropped = append(dropped, [2]int{from, to})
				if err := iunix.DropPages(b); err != nil {
					t.Fatal(err)
				}
				if err := iunix.ProtectNone(b); err != nil {
					t.Fatal(err)
				}
			})
			var last int64
			o.Progress = func(off int64) {
				m.DropBefore(off)
				last = off
			}
			got := sha256.New()
			st, err := FlowListing(got, m.Data, cfg, o)
			if err != nil {
				t.Fatal(err)
			}
			if st != wantSt || !bytes.Equal(got.Sum(nil), sum(want.Bytes())) {
				t.Errorf("mapped listing differs: stats %+v, want %+v", st, wantSt)
			}
			if w, g := FlowLoss(data, cfg.Config), m.FlowLoss(cfg.Config); len(w) != len(g) || len(w) > 0 && w[0] != g[0] {
				t.Errorf("FlowLoss %q, want %q", g, w)
			}
			page := os.Getpagesize()
			if len(dropped) == 0 {
				t.Fatalf("nothing dropped over %d bytes (last progress %d)", len(m.Data), last)
			}
			for i, d := range dropped {
				if d[0]%page != 0 || d[1]%page != 0 || d[1] <= d[0] || i > 0 && d[0] != dropped[i-1][1] || i == 0 && d[0] != 0 {
					t.Fatalf("dropped ranges %v: want page-aligned, adjacent, from the mapping's start", dropped)
				}
			}
			if end := dropped[len(dropped)-1][1]; int64(end) > prefix+last-c.lag {
				t.Errorf("dropped up to %d, beyond the progress %d less the lag %d", end, last, c.lag)
			}
		})
	}
}

func sum(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

// writeTrace writes prefix junk bytes, then n copies of trace, to a
// file in a temporary directory.
func writeTrace(t *testing.T, name string, prefix int, trace []byte, n int) string {
	b := bytes.Repeat([]byte{0xff}, prefix)
	for range n {
		b = append(b, trace...)
	}
	f := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMappedTraceTruncated: pt flow's mapped trace cut shorter while it
// is decoded (a trace still being written, copied or rotated): the read
// past the new end is an error naming the file and the offset (MappedTrace.Do),
// not SIGBUS, and FlowLoss reports it as loss.
func TestMappedTraceTruncated(t *testing.T) {
	p, err := ptgen.Generate(ptgen.Config{Seed: 3, Insns: 300_000, Timing: true})
	if err != nil {
		t.Fatal(err)
	}
	im := NewImage()
	if _, err := im.Add(p.Code, p.Base, ASID{CR3: AnyASID, VMCS: AnyASID}, "code"); err != nil {
		t.Fatal(err)
	}
	const prefix = 1000
	file := writeTrace(t, "growing.pt", prefix, p.Trace, (2<<20)/len(p.Trace)+1)
	m, err := MapFileRange(file, prefix, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !m.Mapped() {
		t.Fatal("not mapped")
	}
	const cut = 64 << 10
	w := &mapfiletest.CutOnWrite{T: t, Path: file, Size: cut}
	cfg := FlowConfig{Image: im}
	err = m.Do(func() error {
		_, err := FlowListing(w, m.Data, cfg, FlowOptions{})
		return err
	})
	page := int64(os.Getpagesize())
	var fe *mapfile.FaultError
	if !errors.As(err, &fe) || fe.File != file || fe.Offset < (cut+page-1)/page*page || fe.Offset >= prefix+int64(len(m.Data)) {
		t.Fatalf("FlowListing of a trace cut to %d bytes: %v, want a fault of %s past the cut", cut, err, file)
	}
	if want := fmt.Sprintf("%s: truncated while reading at offset %d", file, fe.Offset); err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if w.Buf.Len() == 0 {
		t.Error("nothing listed before the cut")
	}
	loss := m.FlowLoss(cfg.Config)
	if len(loss) == 0 || !strings.Contains(loss[len(loss)-1], file+": truncated while reading at offset ") {
		t.Errorf("FlowLoss %q: want the cut reported", loss)
	}
}

// TestMapFileRangeFIFO: a trace given as a FIFO (or a pipe on standard
// input) cannot be mapped: it is copied to a temporary file, gone from
// the temporary directory at once, and that is mapped, so it is not held
// in memory; its bytes are the trace's, whole or a range, and pages
// dropped behind the decoder are read again from the copy. A range beyond
// the stream is an error, as before.
func TestMapFileRangeFIFO(t *testing.T) {
	tr := bytes.Repeat([]byte("0123456789abcdef"), 300000) // 4.8 MB: pages beyond DropLag
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for i, c := range []struct {
		off, size uint64
		err       string
	}{{0, 0, ""}, {4099, 1 << 20, ""}, {10, uint64(len(tr)), "is beyond its"}} {
		// a FIFO of its own: a writer still writing the previous case's
		// trace (read in part) must not feed this one
		fifo := filepath.Join(t.TempDir(), fmt.Sprintf("trace%d.fifo", i))
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip(err)
		}
		wrote := make(chan struct{})
		go func() {
			defer close(wrote)
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			f.Write(tr) // EPIPE once the reader has closed a range read in part
			f.Close()
		}()
		m, err := MapFileRange(fifo, c.off, c.size)
		<-wrote
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("range %d+%d: %v, want %q", c.off, c.size, err, c.err)
			}
			if m != nil {
				m.Close()
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		want := tr[c.off:]
		if c.size != 0 {
			want = want[:c.size]
		}
		if !m.Mapped() || !bytes.Equal(m.Data, want) {
			t.Fatalf("range %d+%d: mapped %v, %d bytes, want %d", c.off, c.size, m.Mapped(), len(m.Data), len(want))
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("range %d+%d: %d temporary files left", c.off, c.size, len(left))
		}
		m.DropBefore(int64(len(m.Data)))
		if !bytes.Equal(m.Data, want) {
			t.Fatalf("range %d+%d: dropped pages differ when read again", c.off, c.size)
		}
		m.Close()
	}
}
