package usb

import (
	"sort"
	"time"

	"github.com/iotap/iotap/usbmon"
)

// textStampWrap is the period of the text API's timestamp: the kernel
// prints (seconds mod 4096) * 1e6 + microseconds.
const textStampWrap = 4096 * 1000000

// Micros returns the event's timestamp in microseconds: the wall clock when
// the source has it (binary, pcap), else the text API's stamp. Compare
// timestamps of one capture only.
func Micros(ev *usbmon.Event) int64 {
	if ev.Fields&usbmon.HasWallClock != 0 {
		return ev.Sec*1000000 + int64(ev.Usec)
	}
	return int64(ev.TextStamp)
}

// elapsed returns to-from in microseconds, undoing one wrap of the text
// stamp.
func elapsed(from, to int64, text bool) int64 {
	d := to - from
	if text && d < 0 {
		d += textStampWrap
	}
	return d
}

// before reports a < b; text stamps compare modulo their wrap (the
// closer way round).
func before(a, b int64, text bool) bool {
	d := b - a
	if text {
		if d > textStampWrap/2 {
			d -= textStampWrap
		} else if d < -textStampWrap/2 {
			d += textStampWrap
		}
	}
	return d > 0
}

// Key identifies an in-flight URB: its id (a kernel pointer, reused once
// the URB is freed) together with where it was submitted.
type Key struct {
	ID       uint64
	Bus      uint16
	Device   uint8
	Endpoint uint8 // endpoint address: number | 0x80 for IN
	Transfer usbmon.TransferType
}

// KeyOf returns the pairing key of ev.
func KeyOf(ev *usbmon.Event) Key {
	return Key{ID: ev.ID, Bus: ev.Bus, Device: ev.Device, Endpoint: ev.EndpointAddress(), Transfer: ev.Transfer}
}

// Submission is what the Pairer remembers of a submission: no data, so
// that pairing never copies payloads.
type Submission struct {
	Micros   int64 // timestamp (see Micros)
	Setup    Setup // valid when HasSetup
	HasSetup bool
	Length   uint32 // requested length
	Seq      uint64 // 0-based position of the event in the stream
}

// Pair is a completion matched with its submission.
type Pair struct {
	Key
	Submit   Submission
	Micros   int64  // completion timestamp
	Latency  int64  // completion - submission, microseconds
	Status   int32  // completion status
	Length   uint32 // actual length
	Seq      uint64 // position of the completion
	TextTime bool   // timestamps come from the text API
}

// LatencyDuration returns Latency as a time.Duration.
func (p Pair) LatencyDuration() time.Duration { return time.Duration(p.Latency) * time.Microsecond }

// DefaultMaxPending bounds the submissions a Pairer keeps waiting for
// their completion.
const DefaultMaxPending = 1 << 16

// Pairer matches completions (C) with their submissions (S) in capture
// order. A completion pairs with the most recent unmatched submission of
// the same Key; a second submission with a Key still pending replaces the
// first, which is counted unmatched (its completion was lost: the kernel
// cannot submit a URB twice). Memory is bounded: at most MaxPending
// submissions wait; beyond that new submissions are not tracked and
// counted in Overflow.
type Pairer struct {
	// MaxPending bounds the pending table (DefaultMaxPending when 0).
	MaxPending int
	// OnSuperseded, if set, sees every submission replaced by a newer one
	// with the same Key before its completion arrived.
	OnSuperseded func(k Key, s Submission)

	pending pendingTable
	seq     uint64

	superseded  uint64
	synthesized uint64
	orphans     uint64
	overflow    uint64
	submitErrs  uint64
	pairs       uint64
}

// NewPairer returns an empty Pairer.
func NewPairer() *Pairer { return &Pairer{} }

// Add feeds the next event. For a completion that matches a submission it
// returns the pair and true. It does not allocate once the pending table
// has grown to its working size.
func (p *Pairer) Add(ev *usbmon.Event) (Pair, bool) {
	var out Pair
	ok := p.addInto(ev, &out)
	return out, ok
}

// addInto is Add storing the pair in *out (the zero Pair when it returns
// false): Pipeline.Each keeps one Pair rather than copying Add's result.
func (p *Pairer) addInto(ev *usbmon.Event, out *Pair) bool {
	if ev.Synthesized {
		// Made at capture start from sysfs: never a transfer to pair.
		p.synthesized++
		*out = Pair{}
		return false
	}
	seq := p.seq
	p.seq++
	// The tag straight from ev's fields: a Key built in memory and read
	// back whole stalls the load (store forwarding), a fifth of the
	// pairing's time.
	id, tag := ev.ID, eventTag(ev)
	switch ev.Type {
	case usbmon.Submission:
		// slotFor and removeTag's steps, written out here: their
		// calls, for every event, cost more than the steps.
		t := &p.pending
		if 2*(t.n+1) > len(t.slots) {
			t.grow()
		}
		i, found := t.findTag(id, tag)
		if found {
			p.superseded++
			if p.OnSuperseded != nil {
				p.OnSuperseded(KeyOf(ev), p.pending.slots[i].s)
			}
		} else if max := p.maxPending(); p.pending.len() >= max {
			p.overflow++
			*out = Pair{}
			return false
		}
		// Stored field by field for the same reason.
		if !found {
			p.pending.n++
		}
		sl := &p.pending.slots[i]
		sl.id, sl.tag = id, tag
		sl.s.Micros, sl.s.Length, sl.s.Seq = Micros(ev), ev.Length, seq
		if ev.Transfer == usbmon.Control && ev.HasSetup() {
			sl.s.Setup, _ = ParseSetup(ev.Setup[:])
			sl.s.HasSetup = true
		} else {
			sl.s.Setup, sl.s.HasSetup = Setup{}, false
		}
	case usbmon.Callback:
		t := &p.pending
		i, found := 0, false
		if t.n != 0 {
			i, found = t.findTag(id, tag)
		}
		if !found {
			p.orphans++
			*out = Pair{}
			return false
		}
		out.Submit = t.slots[i].s
		// removeAt: most entries end their probe run (the table is at
		// most half full) and are only cleared.
		t.n--
		if t.slots[(i+1)&(len(t.slots)-1)].tag != 0 {
			t.shiftBack(i)
		} else {
			t.slots[i].tag = 0
		}
		p.pairs++
		now := Micros(ev)
		text := ev.Fields&usbmon.HasWallClock == 0
		out.ID, out.Bus, out.Device, out.Endpoint, out.Transfer = id, ev.Bus, ev.Device, ev.EndpointAddress(), ev.Transfer
		out.Micros, out.Latency = now, elapsed(out.Submit.Micros, now, text)
		out.Status, out.Length, out.Seq, out.TextTime = ev.Status, ev.Length, seq, text
		return true
	case usbmon.SubmitError:
		// The kernel reports a failed submission with E instead of S:
		// nothing is pending for it.
		p.submitErrs++
	}
	*out = Pair{}
	return false
}

func (p *Pairer) maxPending() int {
	if p.MaxPending > 0 {
		return p.MaxPending
	}
	return DefaultMaxPending
}

// Pending returns the submission waiting for k's completion, if any.
func (p *Pairer) Pending(k Key) (Submission, bool) {
	return p.pending.get(k)
}

// PendingURB is a submission still waiting for its completion.
type PendingURB struct {
	Key
	Submission
}

// InFlight returns the submissions still waiting for their completion, in
// capture order: at the end of a capture, the URBs that never completed.
func (p *Pairer) InFlight() []PendingURB {
	out := make([]PendingURB, 0, p.pending.len())
	p.pending.each(func(k Key, s Submission) {
		out = append(out, PendingURB{k, s})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// PairCounts summarises a Pairer.
type PairCounts struct {
	Pairs uint64 `json:"pairs"`
	// Unmatched submissions: replaced by a newer submission of the same
	// key, plus those still pending (in flight when the capture ended).
	Unmatched  uint64 `json:"unmatched_submissions"`
	Superseded uint64 `json:"superseded_submissions"`
	InFlight   uint64 `json:"in_flight"`
	// Orphans are completions without a submission (the capture started
	// while they were in flight, or the submission was dropped).
	Orphans uint64 `json:"orphan_completions"`
	// Overflow counts submissions not tracked because MaxPending was
	// reached.
	Overflow     uint64 `json:"overflow"`
	SubmitErrors uint64 `json:"submit_errors"`
	// Synthesized events (usbmon.Event.Synthesized: descriptors written at
	// capture start) seen and left out of pairing.
	Synthesized uint64 `json:"synthesized,omitempty"`
}

// Counts returns the pairing counters so far.
func (p *Pairer) Counts() PairCounts {
	inflight := uint64(p.pending.len())
	return PairCounts{Pairs: p.pairs, Unmatched: p.superseded + inflight, Superseded: p.superseded, InFlight: inflight,
		Orphans: p.orphans, Overflow: p.overflow, SubmitErrors: p.submitErrs, Synthesized: p.synthesized}
}
