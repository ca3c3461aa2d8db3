package usb

import (
	"context"
	"errors"

	"github.com/iotap/iotap/usbmon"
)

// Kinds of unmatched submissions (Transfer.Unmatched; the "unmatched"
// field of the usb_unmatched record).
const (
	// UnmatchedSuperseded: the URB id was submitted again before a
	// completion arrived (the completion was lost).
	UnmatchedSuperseded = "superseded"
	// UnmatchedInFlight: the capture ended before the completion (a
	// hung transfer shows up here).
	UnmatchedInFlight = "in_flight"
)

// Transfer is one line of 'iotap usb pair': a completion (Event) paired
// with its submission (Pair), or, when Unmatched is not "", a submission
// that never completed (Key, Submission).
type Transfer struct {
	Event *usbmon.Event // the completion; valid during the call only
	Pair  Pair

	Unmatched  string // "", UnmatchedSuperseded or UnmatchedInFlight
	Key        Key
	Submission Submission
}

// EachTransfer runs the pipeline and calls fn for every paired transfer
// whose completion the filter selects. With unmatched, fn also sees the
// submissions that never completed, rebuilt as events for the filter
// (UnmatchedEvent): each superseded one when its id is reused, those
// still in flight once the input ends (also when it ends truncated). It
// returns Each's error, or fn's.
func (pl *Pipeline) EachTransfer(ctx context.Context, unmatched bool, fn func(*Transfer) error) error {
	var hookErr error
	report := func(kind string, k Key, s Submission) error {
		ev := UnmatchedEvent(k, s)
		if !pl.Filter.Match(&ev) {
			return nil
		}
		return fn(&Transfer{Unmatched: kind, Key: k, Submission: s})
	}
	if unmatched {
		pl.Pairer.OnSuperseded = func(k Key, s Submission) {
			if err := report(UnmatchedSuperseded, k, s); err != nil && hookErr == nil {
				hookErr = err
			}
		}
		defer func() { pl.Pairer.OnSuperseded = nil }()
	}
	var t Transfer
	err := pl.Each(ctx, func(_ uint64, ev *usbmon.Event, p Pair, paired bool) error {
		if !paired {
			return nil
		}
		t.Event, t.Pair = ev, p
		return fn(&t)
	})
	if err == nil {
		err = hookErr
	}
	if unmatched && (err == nil || errors.Is(err, usbmon.ErrTruncated)) {
		for _, u := range pl.Pairer.InFlight() {
			if ferr := report(UnmatchedInFlight, u.Key, u.Submission); ferr != nil {
				return ferr
			}
		}
	}
	return err
}
