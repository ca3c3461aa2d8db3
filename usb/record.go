package usb

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/iotap/iotap/internal/mapfile"
	"github.com/iotap/iotap/usbmon"
)

// EventRecord is the Go form of one "usb_event" record of 'iotap usb read
// --json' (docs/ndjson.md), for programs that read the stream with
// encoding/json: the event, its decoding, and its pairing (the submission
// a completion answers, the latency). EventEncoder writes the records;
// NewEventRecord builds the same values (the encoder's tests compare the
// two).
type EventRecord struct {
	Kind       string `json:"kind"`   // KindEvent
	Seq        uint64 `json:"seq"`    // 1-based position in the input
	TsNs       int64  `json:"ts_ns"`  // the event's own stamp, on the input record's clock
	RelNs      int64  `json:"rel_ns"` // since the input's first event
	URB        string `json:"urb_id"` // "0x..."
	URBType    string `json:"urb_type"`
	Transfer   string `json:"transfer"`
	Bus        uint16 `json:"bus"`
	Dev        uint8  `json:"dev"`
	EP         uint8  `json:"ep"`               // address byte: bit 7 set for IN
	Status     *int32 `json:"status,omitempty"` // completions and errors
	StatusName string `json:"status_name,omitempty"`
	Length     uint32 `json:"length"`
	Setup      string `json:"setup,omitempty"` // hex, submissions
	Data       string `json:"data,omitempty"`  // hex
	// LatencyNs and SubmitSeq are present (null when unpaired) on
	// completions and errors.
	LatencyNs *int64  `json:"latency_ns,omitempty"`
	SubmitSeq *uint64 `json:"submit_seq,omitempty"`
	Request   string  `json:"request,omitempty"`
	Summary   string  `json:"summary,omitempty"`
	Decoded   any     `json:"decoded,omitempty"`
	DecodeErr string  `json:"decode_error,omitempty"`
	VIDPID    string  `json:"vidpid,omitempty"`
	// Synthesized: made at capture start from sysfs (descriptors), not
	// captured traffic (usbmon.Event.Synthesized).
	Synthesized bool `json:"synthesized,omitempty"`
}

// DirectionName is "in" or "out", as in EventRecord.Dir.
func DirectionName(in bool) string {
	if in {
		return "in"
	}
	return "out"
}

// ClassHint returns the class Setup.Describe and Setup.Name should assume
// for s sent to bus:dev: the interface's class for requests to an
// interface, else the device's (0 when unknown).
func ClassHint(ids *Identities, bus uint16, dev uint8, s Setup) uint8 {
	info, ok := ids.Lookup(bus, dev)
	if !ok {
		return 0
	}
	if s.Recipient() == RecipientInterface {
		return info.InterfaceClass(uint8(s.Index))
	}
	return info.Class
}

// NewEventRecord fills the record of ev (position seq, relNs nanoseconds
// after the first event) with its pairing p (paired: p is valid) and
// decoding d.
func NewEventRecord(seq uint64, relNs int64, ev *usbmon.Event, p Pair, paired bool, d Decoded, ids *Identities) EventRecord {
	j := EventRecord{Kind: KindEvent, Seq: seq, TsNs: Micros(ev) * 1000, RelNs: relNs, URB: fmt.Sprintf("0x%x", ev.ID),
		URBType: ev.Type.String(), Transfer: ev.Transfer.String(), Bus: ev.Bus, Dev: ev.Device, EP: ev.EndpointAddress(),
		Length: ev.Length, Summary: d.Summary, Decoded: d.Detail, Synthesized: ev.Synthesized}
	if ev.Type != usbmon.Submission {
		st := ev.Status
		j.Status, j.StatusName = &st, StatusName(st)
	}
	if ev.HasSetup() && ev.Type == usbmon.Submission {
		j.Setup = hex.EncodeToString(ev.Setup[:])
		if s, err := ParseSetup(ev.Setup[:]); err == nil {
			j.Request = s.Name(ClassHint(ids, ev.Bus, ev.Device, s))
		}
	}
	if paired && p.Submit.HasSetup {
		j.Request = p.Submit.Setup.Name(ClassHint(ids, ev.Bus, ev.Device, p.Submit.Setup))
	}
	if ev.HasData() {
		j.Data = hex.EncodeToString(ev.Data)
	}
	if paired {
		lat, ss := p.Latency*1000, p.Submit.Seq+1
		j.LatencyNs, j.SubmitSeq = &lat, &ss
	}
	if d.Err != nil {
		j.DecodeErr = d.Err.Error()
	}
	if info, ok := ids.Lookup(ev.Bus, ev.Device); ok && info.HasID {
		j.VIDPID = fmt.Sprintf("%04x:%04x", info.Vendor, info.Product)
	}
	return j
}

// Pipeline is the pairing pipeline of 'iotap usb read', 'pair' and
// 'stats': it reads events, pairs submissions with completions, learns
// device identities from the enumeration it sees, and hands on the events
// Filter selects.
type Pipeline struct {
	Reader     usbmon.Reader
	Filter     Filter
	Pairer     *Pairer
	Identities *Identities
	// First is the Micros stamp of the input's first event; Started says
	// whether one was read.
	First   int64
	Started bool
	// Limit, when not 0, ends Each after it has handed on Limit events
	// (tshark -c): the rest of the input is not read.
	Limit uint64
	// Live says that the input is a pipe (Prepared.Open): the writers
	// pass each event on at once.
	Live bool
	// Name is the input in the read errors the pipeline returns
	// ("NAME: usbmon: 1u line 4: ..."; Prepared.Open's name), but for a
	// truncation, which Loss lists as lost; "": not named.
	Name string

	window   *WindowFilter          // of the Selection (Prepare), for Loss
	prefetch *usbmon.PrefetchReader // ReadOptions.Workers, for Close
}

// NewPipeline returns a pipeline over r with a new Pairer; ids (nil: new
// ones) collects the identities.
func NewPipeline(r usbmon.Reader, f Filter, ids *Identities) *Pipeline {
	if ids == nil {
		ids = NewIdentities()
	}
	return &Pipeline{Reader: r, Filter: f, Pairer: NewPairer(), Identities: ids}
}

// readError is the read error err named by pl.Name (once: a file cut
// shorter while read names itself, mapfile.Named), but for a truncation
// (usbmon.ErrTruncated: a loss, named where the loss is reported).
func (pl *Pipeline) readError(err error) error {
	if pl.Name == "" || errors.Is(err, usbmon.ErrTruncated) {
		return err
	}
	return mapfile.Named(pl.Name, err)
}

// Each reads every event, pairs it, learns identities and calls fn for the
// events the filter selects, with their 1-based position in the input
// (the numbers pairs refer to, like tshark's frame numbers). ev and its
// data are valid during the call only. It returns the read error (nil at
// the end of the input) or fn's. With Limit set it returns nil once
// Limit events were handed on.
func (pl *Pipeline) Each(ctx context.Context, fn func(seq uint64, ev *usbmon.Event, p Pair, paired bool) error) error {
	return pl.each(ctx, nil, func(seq uint64, ev *usbmon.Event, p *Pair, paired bool) error { return fn(seq, ev, *p, paired) })
}

// each is Each handing on the Pair by its address (valid during the call
// only): the package's own loops pass it on without copying its 88 bytes
// at each call, a copy that also stalls on the fields Pairer.addInto has
// just stored one by one. With st, each event handed on is counted in st
// (Stats.record) instead of calling fn: Pipeline.Stats without a call
// through a closure for every event.
func (pl *Pipeline) each(ctx context.Context, st *Stats, fn func(seq uint64, ev *usbmon.Event, p *Pair, paired bool) error) error {
	var ev usbmon.Event
	var p Pair
	var handed uint64
	for n := uint64(0); ; n++ {
		if pl.Limit != 0 && handed >= pl.Limit {
			return nil
		}
		if n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := pl.Reader.ReadInto(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return pl.readError(err)
		}
		if !pl.Started {
			pl.First, pl.Started = Micros(&ev), true
		}
		ok := pl.Pairer.addInto(&ev, &p)
		if ev.Synthesized || ok && ev.Transfer == usbmon.Control {
			// Learn looks at nothing else.
			pl.Identities.Learn(&ev, p, ok)
		}
		if !pl.Filter.Match(&ev) {
			continue
		}
		handed++
		if st != nil {
			st.record(&ev, &p, ok)
			continue
		}
		if err := fn(n+1, &ev, &p, ok); err != nil {
			return err
		}
	}
}
