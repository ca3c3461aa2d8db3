package mmiotrace

import (
	"fmt"
	"io"

	"github.com/iotap/iotap/internal/ndjson"
)

// Record kinds of 'iotap mmio replay --json' (docs/ndjson.md).
const (
	NDJSONReplayAccess     = "mmio_replay_access"     // an access about to be executed (dry run)
	NDJSONReplayDivergence = "mmio_replay_divergence" // a read whose value differs from the log's
	NDJSONReplaySummary    = "mmio_replay_summary"    // the replay's counts, last
)

// ReplayPrinter writes what a replay does as 'iotap mmio replay' prints
// it: for each access of a dry run (Access) and each divergence
// (Divergence) a text line, or with JSON an NDJSON record (docs/ndjson.md:
// mmio_replay_access, mmio_replay_divergence), after the "input" record
// (Input), and a mmio_replay_summary record at the end (Summary). Use its
// methods as ReplayOptions.OnAccess and OnDivergence. Records are
// appended to a reused buffer: printing allocates nothing.
type ReplayPrinter struct {
	w    io.Writer
	b    []byte
	json bool
}

// NewReplayPrinter writes to w, NDJSON when asJSON.
func NewReplayPrinter(w io.Writer, asJSON bool) *ReplayPrinter {
	return &ReplayPrinter{w: w, json: asJSON}
}

// Input starts the NDJSON stream with the "input" record of the log
// replayed: its path (file, "-" for standard input) and format ("":
// "mmiotrace log"). It prints nothing in text.
func (p *ReplayPrinter) Input(file, format string) {
	if p.json {
		p.b = AppendNDJSONInput(p.b[:0], file, format)
		p.w.Write(p.b)
	}
}

// AppendReplayNDJSON appends the record of kind (NDJSONReplayAccess or
// NDJSONReplayDivergence) of the access r on line of the log, located at
// loc: the access (R/W), its recorded time (ts_ns), physical address and
// value, the register's location, BAR, offset and width (as mmio_diff
// places it), and for a divergence the value read now (got).
func AppendReplayNDJSON(b []byte, kind string, line int64, r *Record, loc Location, got uint64) []byte {
	b = ndjson.Begin(b, kind)
	b = ndjson.Int(b, "line", line)
	b = ndjson.Str(b, "access", r.Kind.String())
	b = ndjson.Uint(b, "ts_ns", r.Time.NS)
	b = ndjson.HexUint(b, "phys", r.Phys)
	b = ndjson.HexUint(b, "value", r.Value)
	k := RegKey{Offset: r.Phys, Width: r.Width}
	if loc.BAR != nil {
		k = RegKey{Dev: loc.BAR.Addr, HasBAR: true, BAR: loc.BAR.Index, Offset: loc.Offset, Width: r.Width}
	}
	b = appendRegKey(b, k)
	if kind == NDJSONReplayDivergence {
		b = ndjson.HexUint(b, "got", got)
	}
	return ndjson.End(b)
}

// Access prints an access about to be executed (a dry run's listing).
func (p *ReplayPrinter) Access(line int64, r *Record, loc Location) {
	if p.json {
		p.b = AppendReplayNDJSON(p.b[:0], NDJSONReplayAccess, line, r, loc, 0)
		p.w.Write(p.b)
		return
	}
	fmt.Fprintf(p.w, "%s %d %s/%d+0x%x 0x%x 0x%x\n", r.Kind, r.Width, loc.BAR.Addr, loc.BAR.Index, loc.Offset, r.Phys, r.Value)
}

// Divergence prints a read whose value (got) differs from the recording.
func (p *ReplayPrinter) Divergence(line int64, r *Record, loc Location, got uint64) {
	if p.json {
		p.b = AppendReplayNDJSON(p.b[:0], NDJSONReplayDivergence, line, r, loc, got)
		p.w.Write(p.b)
		return
	}
	fmt.Fprintf(p.w, "divergence: line %q: %s/%d+0x%x read 0x%x, recorded 0x%x\n", r.Line, loc.BAR.Addr, loc.BAR.Index, loc.Offset, got, r.Value)
}

// AppendNDJSON appends the mmio_replay_summary record of st: whether it
// was a dry run, writes and reads executed (dry: listed), divergences,
// accesses outside every known BAR, bad lines skipped, events the log
// says were lost.
func (st ReplayStats) AppendNDJSON(b []byte, dryRun bool) []byte {
	b = ndjson.Begin(b, NDJSONReplaySummary)
	b = ndjson.Bool(b, "dry_run", dryRun)
	b = ndjson.Int(b, "writes", st.Writes)
	b = ndjson.Int(b, "reads", st.Reads)
	b = ndjson.Int(b, "divergences", st.Divergences)
	b = ndjson.Int(b, "unmapped", st.Unmapped)
	b = ndjson.Int(b, "skipped", st.Skipped)
	b = ndjson.Uint(b, "lost", st.Lost)
	return ndjson.End(b)
}

// Summary ends the NDJSON output with the replay's counts (nothing in
// text: see ReplayStats.String).
func (p *ReplayPrinter) Summary(st ReplayStats, dryRun bool) {
	if !p.json {
		return
	}
	p.b = st.AppendNDJSON(p.b[:0], dryRun)
	p.w.Write(p.b)
}

// String is the one-line summary of a replay.
func (st ReplayStats) String() string {
	return fmt.Sprintf("%d writes, %d reads checked, %d divergences, %d accesses outside known BARs", st.Writes, st.Reads, st.Divergences, st.Unmapped)
}

// DryRun returns a target that executes nothing: its reads return the
// value the log recorded, so a dry run with CheckReads has no divergence.
// It learns the recorded values through opt.OnAccess, which it wraps (set
// OnAccess before calling it).
func DryRun(opt *ReplayOptions) ReplayTarget {
	d := &dryTarget{}
	next := opt.OnAccess
	opt.OnAccess = func(line int64, r *Record, loc Location) {
		d.last = r.Value
		if next != nil {
			next(line, r, loc)
		}
	}
	return d
}

type dryTarget struct{ last uint64 }

func (*dryTarget) Write(int, uint64, int, uint64) error    { return nil }
func (d *dryTarget) Read(int, uint64, int) (uint64, error) { return d.last, nil }
