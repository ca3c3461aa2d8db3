package intelpt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// decodeAll lists packets (and errors, with resync) from either decoder.
func decodeAll(next func(*Packet) error, offset func() int64, sync func() error) []string {
	var out []string
	var p Packet
	if err := sync(); err != nil {
		return append(out, "nosync "+err.Error())
	}
	for {
		off := offset()
		err := next(&p)
		if err == io.EOF {
			return out
		}
		if err != nil {
			out = append(out, err.Error())
			if errors.Is(err, ErrTruncated) {
				return out
			}
			if err := sync(); err != nil {
				return append(out, "end "+err.Error())
			}
			continue
		}
		out = append(out, canonical(&p, 0x202)+" @"+string(rune('0'+off%10)))
	}
}

func TestStreamMatchesSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for round := 0; round < 300; round++ {
		buf, _ := randomStream(r, 200, round%2 == 0)
		buf = bytes.Clone(buf)
		for i := r.IntN(4); i > 0; i-- { // corruption: errors and resyncs
			buf[r.IntN(len(buf))] = byte(r.Uint32())
		}
		if round%5 == 0 { // runs of PSBs longer than one PSB
			at := r.IntN(len(buf))
			buf = append(buf[:at], append(bytes.Repeat([]byte{2, 0x82}, 8+r.IntN(40)), buf[at:]...)...)
		}
		d := NewDecoder(buf, Config{})
		want := decodeAll(d.Next, d.Offset, d.SyncForward)
		window := 192 + r.IntN(200) // longer than the PSB runs below plus context
		s := newStreamDecoder(iotest.HalfReader(bytes.NewReader(buf)), Config{}, window)
		got := decodeAll(s.Next, s.Offset, s.SyncForward)
		if len(got) != len(want) {
			t.Fatalf("round %d (window %d): %d entries, want %d\n got %v\nwant %v", round, window, len(got), len(want), got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("round %d (window %d): entry %d: %q, want %q", round, window, i, got[i], want[i])
			}
		}
	}
}

func TestDumpReaderMatchesDump(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	opts := []DumpOptions{{}, {Raw: true, LastIP: true}, {NoSync: true, Time: true, TimeDelta: true}, {TCal: true}}
	for round := 0; round < 200; round++ {
		buf, _ := randomStream(r, 300, false)
		buf = bytes.Clone(buf)
		for i := r.IntN(4); i > 0; i-- {
			buf[r.IntN(len(buf))] = byte(r.Uint32())
		}
		cfg := Config{MTCFreq: 3, CPUID15EAX: 2, CPUID15EBX: 100, NomFreq: 10}
		opt := opts[round%len(opts)]
		var a, b bytes.Buffer
		ra, _ := Dump(&a, buf, cfg, opt)
		rb, err := DumpReader(&b, iotest.OneByteReader(bytes.NewReader(buf)), 64+r.IntN(300), cfg, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) || ra != rb {
			t.Fatalf("round %d: stream dump differs (%+v vs %+v)\n%s\n---\n%s", round, ra, rb, a.String(), b.String())
		}
	}
}

func TestStreamReadError(t *testing.T) {
	var e Encoder
	e.Encode(Packet{Kind: KindPSB})
	e.Encode(Packet{Kind: KindPSBEnd})
	boom := errors.New("disk on fire")
	s := NewStreamDecoder(io.MultiReader(bytes.NewReader(e.Bytes()), iotest.ErrReader(boom)), Config{}, 0)
	var p Packet
	n := 0
	for s.Next(&p) == nil {
		n++
	}
	if n != 2 || !errors.Is(s.Err(), boom) {
		t.Fatalf("%d packets, err %v", n, s.Err())
	}
}

func TestStreamAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	buf, _ := randomStream(r, 5000, true)
	rd := bytes.NewReader(buf)
	s := NewStreamDecoder(rd, Config{}, 4096)
	var p Packet
	allocs := testing.AllocsPerRun(5, func() {
		rd.Reset(buf)
		s.base, s.eof, s.d.buf, s.d.pos, s.d.sync, s.d.block = 0, false, s.window[:0], 0, -1, 0
		for s.Next(&p) == nil {
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per pass", allocs)
	}
}

func TestStatsReaderMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for round := 0; round < 50; round++ {
		buf, _ := randomStream(r, 2000, false)
		buf = bytes.Clone(buf)
		for i := r.IntN(4); i > 0; i-- {
			buf[r.IntN(len(buf))] = byte(r.Uint32())
		}
		cfg := Config{MTCFreq: 2, CPUID15EAX: 1, CPUID15EBX: 3}
		a := ComputeStats(buf, cfg)
		b, err := ComputeStatsReader(iotest.HalfReader(bytes.NewReader(buf)), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("round %d:\n%+v\n%+v", round, a, b)
		}
	}
}

// FuzzStreamDecoder checks the stream decoder against the slice decoder on
// arbitrary input with small windows (skipping inputs with PSB runs longer
// than the window can hold, where the stream decoder settles for an
// earlier PSB).
func FuzzStreamDecoder(f *testing.F) {
	f.Add([]byte{2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 0x19, 1}, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, w uint8) {
		window := 128 + int(w)
		run, longest := 0, 0
		for i := 0; i+1 < len(data); i++ {
			if (data[i] == 2 && data[i+1] == 0x82) || (data[i] == 0x82 && data[i+1] == 2) {
				run++
				longest = max(longest, run)
			} else {
				run = 0
			}
		}
		if longest > window-80 {
			t.Skip("PSB run longer than the window")
		}
		d := NewDecoder(data, Config{})
		want := decodeAll(d.Next, d.Offset, d.SyncForward)
		s := newStreamDecoder(iotest.HalfReader(bytes.NewReader(data)), Config{}, window)
		got := decodeAll(s.Next, s.Offset, s.SyncForward)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("window %d:\n got %v\nwant %v", window, got, want)
		}
	})
}

// TestDumpJSONReaderMatchesDumpJSON: the streamed NDJSON listing is
// DumpJSON's on the whole trace, byte for byte and with the same result,
// whatever the window and however the reader cuts the input (damaged
// random streams, with and without sync, PADs left out).
func TestDumpJSONReaderMatchesDumpJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	opts := []DumpOptions{{}, {NoSync: true, StreamName: "cpu 1", StreamCPU: 1}, {NoPad: true}}
	for round := 0; round < 200; round++ {
		buf, _ := randomStream(r, 300, false)
		buf = bytes.Clone(buf)
		for i := r.IntN(4); i > 0; i-- {
			buf[r.IntN(len(buf))] = byte(r.Uint32())
		}
		if round%5 == 4 { // cut inside the last packets
			buf = buf[:len(buf)-r.IntN(min(len(buf), 12))]
		}
		cfg := Config{MTCFreq: 3, CPUID15EAX: 2, CPUID15EBX: 100, NomFreq: 10}
		opt := opts[round%len(opts)]
		var a, b bytes.Buffer
		ra, _ := DumpJSON(&a, buf, cfg, opt)
		rb, err := DumpJSONReader(&b, iotest.OneByteReader(bytes.NewReader(buf)), 64+r.IntN(300), cfg, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) || ra != rb {
			t.Fatalf("round %d: stream differs (%+v vs %+v)\n%s\n---\n%s", round, ra, rb, a.String(), b.String())
		}
	}
	// A read error ends the listing and is returned.
	var e Encoder
	e.Encode(Packet{Kind: KindPSB})
	e.Encode(Packet{Kind: KindPSBEnd})
	boom := errors.New("disk on fire")
	var out bytes.Buffer
	res, err := DumpJSONReader(&out, io.MultiReader(bytes.NewReader(e.Bytes()), iotest.ErrReader(boom)), 0, Config{}, DumpOptions{})
	if !errors.Is(err, boom) || res.Packets != 2 || bytes.Count(out.Bytes(), []byte("\n")) != 2 {
		t.Fatalf("read error: %v, %+v, %q", err, res, out.String())
	}
}
