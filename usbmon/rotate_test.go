package usbmon

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/iotap/iotap/rotate"
)

func rotateEvents(n int) []Event {
	evs := make([]Event, n)
	for i := range evs {
		evs[i] = Event{ID: uint64(i + 1), Type: Callback, Transfer: Bulk, Bus: 1, Device: 3, Endpoint: 2, In: true,
			Sec: 100 + int64(i/10), Usec: int32(i), Fields: HasWallClock | HasBus, DataFlag: DataPresent,
			Data: bytes.Repeat([]byte{byte(i)}, 1+i%50), Length: uint32(1 + i%50)}
	}
	return evs
}

// readIDs reads a capture file on its own and returns its URB ids.
func readIDs(t *testing.T, path string) []uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, _, err := NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var ids []uint64
	var ev Event
	for {
		err := r.ReadInto(&ev)
		if errors.Is(err, io.EOF) {
			return ids
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		ids = append(ids, ev.ID)
	}
}

// A Recording into a ring of files: every file reads on its own, no event
// is lost or written twice across files, each file stops at the first
// event after its size or age limit, and --ring keeps the newest files.
func TestRotatorRecording(t *testing.T) {
	evs := rotateEvents(500)
	const maxRecord = 64 + 50 + 32 // pcapng EPB of the largest event, rounded up
	for _, tc := range []struct {
		name  string
		opt   rotate.Options
		files int // files kept
	}{
		{"size", rotate.Options{Size: 4096}, 0},
		{"duration", rotate.Options{Duration: 10 * time.Second}, 0},
		{"size ring 3", rotate.Options{Size: 4096, Files: 3}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opt := tc.opt
			opt.Path = filepath.Join(dir, "cap.pcapng")
			// The clock moves 1 s per event written.
			clock := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
			opt.Now = func() time.Time { return clock }
			var removed []string
			opt.OnFile = func(p string, rm bool) {
				if rm {
					removed = append(removed, p)
				}
			}
			rot, err := NewRotator(opt, func(w io.Writer) (Writer, error) { return NewPcapngWriter(w, LinkTypeUSBLinuxMmapped) })
			if err != nil {
				t.Fatal(err)
			}
			fc := &fakeCapture{evs: evs}
			_, stop := context.WithCancel(context.Background())
			rec := &Recording{capt: fc, stop: stop, opt: RecordOptions{Keep: func(*Event) bool { clock = clock.Add(time.Second); return true }}}
			st, rerr, werr := rec.Run(rot)
			if rerr != nil || werr != nil || st.Events != uint64(len(evs)) {
				t.Fatal(st, rerr, werr)
			}
			if err := rot.Close(); err != nil {
				t.Fatal(err)
			}
			names, _ := filepath.Glob(filepath.Join(dir, "cap_*.pcapng"))
			sort.Strings(names)
			if len(names) < 2 {
				t.Fatalf("%d file(s): nothing rotated", len(names))
			}
			if got := rot.Files(); len(got) != len(names) {
				t.Fatalf("Files() %v, on disk %v", got, names)
			}
			var all []uint64
			for i, n := range names {
				ids := readIDs(t, n)
				if len(ids) == 0 {
					t.Errorf("%s: no events", n)
				}
				fi, _ := os.Stat(n)
				if opt.Size > 0 && i < len(names)-1 && (fi.Size() < opt.Size || fi.Size() >= opt.Size+maxRecord) {
					t.Errorf("%s: %d bytes, limit %d", n, fi.Size(), opt.Size)
				}
				if opt.Duration > 0 && len(ids) > int(opt.Duration/time.Second) {
					t.Errorf("%s: %d events of 1 s each, limit %v", n, len(ids), opt.Duration)
				}
				all = append(all, ids...)
			}
			// The files kept hold a contiguous run of events ending
			// with the last, each once.
			if tc.files == 0 && len(all) != len(evs) {
				t.Fatalf("%d events in %d files, want %d", len(all), len(names), len(evs))
			}
			first := len(evs) - len(all)
			for i, id := range all {
				if id != evs[first+i].ID {
					t.Fatalf("event %d of the files has id %d, want %d", i, id, evs[first+i].ID)
				}
			}
			if tc.files > 0 {
				if len(names) != tc.files || len(removed) == 0 || rot.files.Started() != tc.files+len(removed) {
					t.Errorf("ring %d: %d files kept, %d removed, %d started", tc.files, len(names), len(removed), rot.files.Started())
				}
				if want := opt.FileName(rot.files.Started(), clock); filepath.Base(names[len(names)-1])[:10] != filepath.Base(want)[:10] {
					t.Errorf("last file %s, want number %d", names[len(names)-1], rot.files.Started())
				}
			}
		})
	}
}

// The interval lines add up to the recording's totals.
func TestRecordingIntervals(t *testing.T) {
	evs := rotateEvents(1000)
	var lines []IntervalStats
	fc := &fakeCapture{evs: evs}
	_, stop := context.WithCancel(context.Background())
	slow := func(*Event) bool { time.Sleep(20 * time.Microsecond); return true }
	rec := &Recording{capt: fc, stop: stop, opt: RecordOptions{Keep: slow, Interval: 2 * time.Millisecond,
		OnInterval: func(s IntervalStats) { lines = append(lines, s) }}}
	var out bytes.Buffer
	w, _ := NewPcapngWriter(&out, LinkTypeUSBLinuxMmapped)
	st, rerr, werr := rec.Run(w)
	if rerr != nil || werr != nil {
		t.Fatal(rerr, werr)
	}
	var n, b uint64
	wantBytes := uint64(0)
	for _, ev := range evs {
		wantBytes += uint64(len(ev.Data))
	}
	var prev time.Duration
	for _, l := range lines {
		n += l.Events
		b += l.Bytes
		if l.Start != prev || l.End < l.Start {
			t.Errorf("interval %v..%v after %v", l.Start, l.End, prev)
		}
		prev = l.End
	}
	if len(lines) < 2 || n != st.Events || n != uint64(len(evs)) || b != wantBytes {
		t.Errorf("%d intervals: %d events, %d bytes; recording %d events, %d bytes", len(lines), n, b, st.Events, wantBytes)
	}
}
