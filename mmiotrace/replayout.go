package mmiotrace

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// ReplayPrinter writes what a replay does as 'iotap mmio replay' prints
// it: for each access of a dry run (Access) and each divergence
// (Divergence) a text line, or with JSON an NDJSON record ("type" access
// or divergence, the log's line, kind, width, device, BAR, offset, phys,
// the recorded value and the one read now), and with JSON a summary
// record at the end (Summary). Use its methods as ReplayOptions.OnAccess
// and OnDivergence.
type ReplayPrinter struct {
	w    io.Writer
	enc  *json.Encoder
	json bool
}

// NewReplayPrinter writes to w, NDJSON when asJSON.
func NewReplayPrinter(w io.Writer, asJSON bool) *ReplayPrinter {
	return &ReplayPrinter{w: w, enc: json.NewEncoder(w), json: asJSON}
}

// replayJSON is one access (dry run) or divergence of the NDJSON output.
type replayJSON struct {
	Type   string `json:"type"` // "access" or "divergence"
	Line   int64  `json:"line"`
	Kind   string `json:"kind"` // "W", or "R" with CheckReads
	Width  uint8  `json:"width"`
	Device string `json:"device"`
	BAR    int    `json:"bar"`
	Offset string `json:"offset"`
	Phys   string `json:"phys"`
	Value  string `json:"value"`         // recorded value
	Got    string `json:"got,omitempty"` // divergence: value read now
}

// hex0x formats v as "0x…", the form the log uses.
func hex0x(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

func (p *ReplayPrinter) record(typ string, line int64, r *Record, loc Location, got string) {
	p.enc.Encode(replayJSON{Type: typ, Line: line, Kind: r.Kind.String(), Width: r.Width, Device: loc.BAR.Addr.String(),
		BAR: loc.BAR.Index, Offset: hex0x(loc.Offset), Phys: hex0x(r.Phys), Value: hex0x(r.Value), Got: got})
}

// Access prints an access about to be executed (a dry run's listing).
func (p *ReplayPrinter) Access(line int64, r *Record, loc Location) {
	if p.json {
		p.record("access", line, r, loc, "")
		return
	}
	fmt.Fprintf(p.w, "%s %d %s/%d+0x%x 0x%x 0x%x\n", r.Kind, r.Width, loc.BAR.Addr, loc.BAR.Index, loc.Offset, r.Phys, r.Value)
}

// Divergence prints a read whose value (got) differs from the recording.
func (p *ReplayPrinter) Divergence(line int64, r *Record, loc Location, got uint64) {
	if p.json {
		p.record("divergence", line, r, loc, hex0x(got))
		return
	}
	fmt.Fprintf(p.w, "divergence: line %q: %s/%d+0x%x read 0x%x, recorded 0x%x\n", r.Line, loc.BAR.Addr, loc.BAR.Index, loc.Offset, got, r.Value)
}

// Summary ends the NDJSON output with the replay's counts (nothing in
// text: see ReplayStats.String).
func (p *ReplayPrinter) Summary(st ReplayStats, dryRun bool) {
	if !p.json {
		return
	}
	p.enc.Encode(struct {
		Divergences int64  `json:"divergences"`
		DryRun      bool   `json:"dry_run"`
		Lost        uint64 `json:"lost"`
		Reads       int64  `json:"reads"`
		Skipped     int64  `json:"skipped"`
		Type        string `json:"type"`
		Unmapped    int64  `json:"unmapped"`
		Writes      int64  `json:"writes"`
	}{st.Divergences, dryRun, st.Lost, st.Reads, st.Skipped, "summary", st.Unmapped, st.Writes})
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
