package mmiotrace

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"
)

// ReplayTarget executes accesses on BAR-relative offsets of one device.
type ReplayTarget interface {
	Write(bar int, off uint64, width int, v uint64) error
	Read(bar int, off uint64, width int) (uint64, error)
}

// Pacing says how Replay spaces accesses in time.
type Pacing uint8

// Pacing modes.
const (
	PaceFast     Pacing = iota // as fast as possible
	PaceRecorded               // the recorded gaps between accesses
	PaceFixed                  // ReplayOptions.Delay between accesses
)

// ReplayOptions configures Replay.
type ReplayOptions struct {
	Pacing     Pacing
	Delay      time.Duration // PaceFixed
	Ranges     []AddrRange   // only accesses in these physical ranges (any)
	BARs       []BARRange    // only accesses in these BAR ranges (any)
	StartMark  string        // start after the MARK containing this text
	StopMark   string        // stop at the MARK containing this text
	CheckReads bool          // read recorded reads back and compare values
	// Device restricts the replay to the accesses of one device (zero
	// value: every device the log's PCIDEV records describe).
	Device *PCIAddr
	// OnAccess, when set, is called before each access is executed, with
	// the access's line number in the log.
	OnAccess func(line int64, r *Record, loc Location)
	// OnDivergence is called for a read whose value differs.
	OnDivergence func(line int64, r *Record, loc Location, got uint64)
	KeepGoing    bool // skip bad lines (counted in ReplayStats.Skipped)
}

// ReplayStats counts what Replay did.
type ReplayStats struct {
	Writes      int64 // writes executed
	Reads       int64 // reads executed (CheckReads)
	Divergences int64 // reads whose value differed
	Unmapped    int64 // accesses outside every known BAR (not executed)
	Skipped     int64 // bad lines skipped
	Lost        uint64
	// Loss says what the log read lost (Reader.Loss: lost events, bad
	// lines skipped, a last line cut short); empty when complete.
	Loss []string
}

// Replay re-executes the writes of a log (and, with CheckReads, its reads)
// on target with their recorded widths, in log order.
func Replay(ctx context.Context, in io.Reader, target ReplayTarget, opt ReplayOptions) (ReplayStats, error) {
	var st ReplayStats
	rd := NewReader(in)
	defer rd.Close()
	rd.SetKeepGoing(opt.KeepGoing)
	bars := NewBARMap()
	f := &Filter{Ranges: opt.Ranges, BARs: opt.BARs}
	active := opt.StartMark == ""
	var rec Record
	var last uint64
	first := true
	for {
		err := rd.ReadInto(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return st, err
		}
		bars.Observe(&rec)
		if rec.Kind == KindMark {
			if !active && bytes.Contains(rec.Text, []byte(opt.StartMark)) {
				active = true
			} else if active && opt.StopMark != "" && bytes.Contains(rec.Text, []byte(opt.StopMark)) {
				break
			}
			continue
		}
		if !active || (rec.Kind != KindWrite && !(opt.CheckReads && rec.Kind == KindRead)) {
			continue
		}
		if f.NeedsBARs() {
			if err := f.Resolve(bars); err != nil {
				return st, err
			}
		}
		if (len(f.Ranges) > 0 || len(f.BARs) > 0) && !f.Match(&rec) {
			continue
		}
		loc, ok := bars.Lookup(rec.Phys)
		if !ok || (opt.Device != nil && loc.BAR.Addr != *opt.Device) {
			if !ok {
				st.Unmapped++
			}
			continue
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
		switch opt.Pacing {
		case PaceRecorded:
			if !first && rec.Time.NS > last {
				if err := sleepCtx(ctx, time.Duration(rec.Time.NS-last)); err != nil {
					return st, err
				}
			}
		case PaceFixed:
			if !first {
				if err := sleepCtx(ctx, opt.Delay); err != nil {
					return st, err
				}
			}
		}
		first, last = false, rec.Time.NS
		if opt.OnAccess != nil {
			opt.OnAccess(rd.Line(), &rec, loc)
		}
		if rec.Kind == KindWrite {
			if err := target.Write(loc.BAR.Index, loc.Offset, int(rec.Width), rec.Value); err != nil {
				return st, fmt.Errorf("mmiotrace: replay line %d: %w", rd.Line(), err)
			}
			st.Writes++
			continue
		}
		got, err := target.Read(loc.BAR.Index, loc.Offset, int(rec.Width))
		if err != nil {
			return st, fmt.Errorf("mmiotrace: replay line %d: %w", rd.Line(), err)
		}
		st.Reads++
		if got != rec.Value {
			st.Divergences++
			if opt.OnDivergence != nil {
				opt.OnDivergence(rd.Line(), &rec, loc, got)
			}
		}
	}
	st.Skipped, st.Lost, st.Loss = rd.Skipped(), rd.Lost(), rd.Loss()
	return st, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
