//go:build linux

package userevents

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"testing"
)

// pipeEvent is an Event writing to a pipe (no kernel user_events needed)
// and the pipe's read end, which gets write_index then the payload.
func pipeEvent(t *testing.T, cmd string, idx uint32) (*Event, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	e := benchEvent(t, cmd, int(w.Fd()))
	e.idx = idx
	return e, r
}

// readWrite reads what one write put in the pipe.
func readWrite(t *testing.T, r *os.File) []byte {
	t.Helper()
	b := make([]byte, 8192)
	n, err := r.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	return b[:n]
}

// wantWrite is write_index then payload.
func wantWrite(idx uint32, payload []byte) []byte {
	return append(binary.LittleEndian.AppendUint32(nil, idx), payload...)
}

// TestWriteIntsFastPath checks that Write's integer fast path writes
// exactly what the general encoder (Schema.AppendPayload) produces, and
// fails the same way.
func TestWriteIntsFastPath(t *testing.T) {
	const cmd = "ev u8 a; s8 b; u16 c; s16 d; u32 e; s32 f; u64 g; s64 h"
	e, r := pipeEvent(t, cmd, 7)
	if e.ints == nil {
		t.Fatal("integer event not on the fast path")
	}
	for _, args := range [][]any{
		{uint8(1), int8(-2), uint16(3), int16(-4), uint32(5), int32(-6), uint64(7), int64(-8)},
		{255, -128, 65535, -32768, uint32(math.MaxUint32), int32(math.MinInt32), uint64(math.MaxUint64), int64(math.MinInt64)},
		{true, false, uint(9), uintptr(10), 11, 12, 13, -14},
		{uint16(200), int(-1), uint8(0), int64(32767), uint64(1 << 31), -1, int32(1), uint32(0xdeadbeef)},
	} {
		want, err := e.schema.AppendPayload(nil, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if err := e.Write(args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if got := readWrite(t, r); !bytes.Equal(got, wantWrite(7, want)) {
			t.Errorf("%v:\n got %x\nwant %x", args, got, wantWrite(7, want))
		}
		// A pipe refuses pwrite (ESPIPE): the write went through writev.
		if !e.p.noPwrite.Load() {
			t.Error("ESPIPE from pwrite not noticed")
		}
	}
	for _, args := range [][]any{
		{256, 0, 0, 0, 0, 0, 0, 0},                  // u8 overflow
		{0, -129, 0, 0, 0, 0, 0, 0},                 // s8 underflow
		{0, 0, -1, 0, 0, 0, 0, 0},                   // negative unsigned
		{0, 0, 0, 0, 0, 0, 0, uint64(1 << 63)},      // s64 overflow
		{0, 0, 0, 0, "x", 0, 0, 0},                  // not an integer
		{0, 0, 0, 0, 0, 0, 0},                       // too few values
		{0, 0, 0, 0, 0, 0, 0, 0, 0},                 // too many
		{0, 0, 0, 0, 0, 0, 0, float64(1)},           // float
		{0, 0, 0, 0, 0, 0, int64(math.MaxInt64), 0}, // u64 takes it: valid
	} {
		_, want := e.schema.AppendPayload(nil, args...)
		got := e.Write(args...)
		if want == nil {
			if got != nil {
				t.Errorf("%v: %v, want success", args, got)
			}
			readWrite(t, r)
			continue
		}
		if got == nil || got.Error() != want.Error() || !errors.Is(got, ErrPayload) {
			t.Errorf("%v: %v, want %v", args, got, want)
		}
	}
}

// TestTypedRunsFastPath checks that Typed.Write's copy runs write exactly
// what StructLayout.Append produces, padding and coalesced runs included.
func TestTypedRunsFastPath(t *testing.T) {
	type rec struct {
		A uint8 `userevents:"a"`
		B int16 `userevents:"b"` // Go pads before B; the payload does not
		C uint32
		D int64
		E [5]byte
		F bool
		G [3]byte `userevents:"g,unsigned char[3]"`
		H uint64
		I int
		_ uint32
		J int8
		K uint16 `userevents:"k,short"`
		//lint:ignore U1000 an unexported field is not an event field
		_x string // unexported: not a field
	}
	l, err := LayoutOf[rec]("ev")
	if err != nil {
		t.Fatal(err)
	}
	if l.runs == nil {
		t.Fatal("fixed struct not on the fast path")
	}
	if len(l.runs) >= len(l.Schema.Fields) {
		t.Errorf("no run coalesced: %d runs for %d fields", len(l.runs), len(l.Schema.Fields))
	}
	e, r := pipeEvent(t, l.Schema.Command(), 3)
	ty := &Typed[rec]{Event: e, layout: l}
	for _, v := range []rec{
		{},
		{A: 1, B: -2, C: 3, D: -4, E: [5]byte{'h', 'e', 'l', 'l', 'o'}, F: true, G: [3]byte{1, 2, 3}, H: math.MaxUint64, I: math.MinInt64, J: -1, K: 0xbeef},
		{A: 255, B: math.MaxInt16, C: math.MaxUint32, D: math.MaxInt64, H: 1 << 40, I: -5, J: math.MinInt8, K: 1},
	} {
		want, err := l.Append(nil, &v)
		if err != nil {
			t.Fatal(err)
		}
		if err := ty.Write(&v); err != nil {
			t.Fatal(err)
		}
		if got := readWrite(t, r); !bytes.Equal(got, wantWrite(3, want)) {
			t.Errorf("%+v:\n got %x\nwant %x", v, got, wantWrite(3, want))
		}
	}
}
