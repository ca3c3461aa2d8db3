package usbmon

import (
	"bytes"
	"context"
	"io"
	"testing"
)

// fakeCapture hands out events as a live capture would; Stats reports
// dropped events.
type fakeCapture struct {
	evs     []Event
	i       int
	dropped uint64
	closed  bool
}

func (f *fakeCapture) ReadInto(ev *Event) error {
	if f.closed || f.i == len(f.evs) {
		return io.EOF
	}
	*ev = f.evs[f.i]
	f.i++
	return nil
}
func (f *fakeCapture) Record() []byte { return nil }
func (f *fakeCapture) Stats() CaptureStats {
	return CaptureStats{Dropped: f.dropped, RingSize: RingSizeMax}
}
func (f *fakeCapture) Close() error { f.closed = true; return nil }

func TestRecordingRun(t *testing.T) {
	evs := make([]Event, 10)
	for i := range evs {
		evs[i] = Event{ID: uint64(i + 1), Type: Callback, Transfer: Bulk, Bus: 1, Device: uint8(1 + i%2), Endpoint: 2, In: true,
			Sec: 100, Usec: int32(i), Fields: HasWallClock | HasBus, DataFlag: DataPresent, Data: bytes.Repeat([]byte{byte(i)}, 40), Length: 40}
	}
	for _, tc := range []struct {
		name          string
		opt           RecordOptions
		events, cut   uint64
		firstDataLen  int
		wantDropped   uint64
		wantRemaining int // events the capture still held when Run stopped
	}{
		{"all", RecordOptions{}, 10, 0, 40, 3, 0},
		{"keep device 2", RecordOptions{Keep: func(ev *Event) bool { return ev.Device == 2 }}, 5, 0, 40, 3, 0},
		{"snaplen", RecordOptions{Snaplen: 16}, 10, 10, 16, 3, 0},
		{"count", RecordOptions{Count: 4}, 4, 0, 40, 3, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := &fakeCapture{evs: evs, dropped: 3}
			_, stop := context.WithCancel(context.Background())
			r := &Recording{capt: fc, opt: tc.opt, stop: stop}
			var out bytes.Buffer
			w, err := NewPcapngWriter(&out, LinkTypeUSBLinuxMmapped)
			if err != nil {
				t.Fatal(err)
			}
			st, rerr, werr := r.Run(w)
			if rerr != nil || werr != nil {
				t.Fatal(rerr, werr)
			}
			if st.Events != tc.events || st.Cut != tc.cut || st.Capture.Dropped != 3 {
				t.Errorf("stats %+v", st)
			}
			if left := len(evs) - fc.i; left != tc.wantRemaining {
				t.Errorf("%d events left unread, want %d", left, tc.wantRemaining)
			}
			// Read the file back: the events, their cut data with the
			// kernel's length, and the drops of the final statistics.
			rd, _, err := NewReader(&out)
			if err != nil {
				t.Fatal(err)
			}
			var n uint64
			for {
				ev, err := rd.Read()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(ev.Data) != tc.firstDataLen || ev.Length != 40 {
					t.Errorf("event %d: %d data bytes, length %d", n, len(ev.Data), ev.Length)
				}
				if tc.opt.Keep != nil && !tc.opt.Keep(ev) {
					t.Errorf("event %d should have been filtered out", n)
				}
				n++
			}
			if n != tc.events {
				t.Errorf("read back %d events, want %d", n, tc.events)
			}
			if d, ok := rd.(interface{ Dropped() uint64 }); !ok || d.Dropped() != tc.wantDropped {
				t.Errorf("file records drops %v", d)
			}
		})
	}
}

func TestRecordStatsString(t *testing.T) {
	st := RecordStats{Events: 5, Elapsed: 1500e6, Capture: CaptureStats{Dropped: 2, Batches: 3, Fillers: 1, Flushed: 5,
		RingSize: RingSizeMax, RingPeak: 2048, BatchPeak: 4, MaxStall: 12345, MaxWait: 67890, QueuePeak: 4096, Nice: -20}}
	for _, tc := range []struct {
		method Method
		queue  int
		want   string
	}{
		{MethodText, 0, "5 events in 1.5s; kernel dropped 2"},
		{MethodRead, 0, "5 events in 1.5s; kernel dropped 2"},
		{MethodMmap, 0, "5 events in 1.5s; kernel dropped 2; 3 batches, 1 filler records skipped, 5 events flushed from the ring; ring peak 2K of 1200K (4 events in one fetch), ring undrained for at most 10µs, events waited in the ring up to 70µs"},
		{MethodMmap, 1 << 20, "5 events in 1.5s; kernel dropped 2; 3 batches, 1 filler records skipped, 5 events flushed from the ring; ring peak 2K of 1200K (4 events in one fetch), ring undrained for at most 10µs, events waited in the ring up to 70µs, queue peak 4K of 1024K, draining thread at nice -20"},
	} {
		st.Method, st.Queue = tc.method, tc.queue
		if got := st.String(); got != tc.want {
			t.Errorf("%v queue %d:\n got %s\nwant %s", tc.method, tc.queue, got, tc.want)
		}
	}
}
