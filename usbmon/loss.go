package usbmon

import (
	"fmt"
	"strings"
)

// LossReason is why a writer could not store an event completely.
type LossReason uint8

// Loss reasons.
const (
	// LossData: data bytes beyond what the target holds (text: 32).
	LossData LossReason = iota
	// LossISO: ISO descriptors beyond what the target holds (text: 5,
	// link type 189: none).
	LossISO
	// LossExtended: interval, start frame, xfer_flags or ndesc (link type
	// 189, '1t' text).
	LossExtended
	// LossWallClock: the wall clock (text keeps only its own stamp).
	LossWallClock
	// LossBus: the bus number ('1t' text).
	LossBus
	// LossXferFlags: transfer flags (text).
	LossXferFlags
	numLossReasons
)

var lossNames = [numLossReasons]string{
	LossData:      "data bytes beyond the format's limit",
	LossISO:       "ISO descriptors",
	LossExtended:  "interval/start frame/ndesc",
	LossWallClock: "wall-clock timestamps",
	LossBus:       "bus numbers",
	LossXferFlags: "transfer flags",
}

// Loss counts, per reason, the events a writer stored incompletely.
type Loss struct {
	n [numLossReasons]int
}

// Add counts one event that lost something for reason r.
func (l *Loss) Add(r LossReason) { l.n[r]++ }

// Count returns the count for reason r.
func (l Loss) Count(r LossReason) int { return l.n[r] }

// merge adds the counts of o.
func (l *Loss) merge(o Loss) {
	for i, n := range o.n {
		l.n[i] += n
	}
}

// Total returns the number of (event, reason) losses.
func (l Loss) Total() int {
	t := 0
	for _, n := range l.n {
		t += n
	}
	return t
}

// String describes the losses, e.g. "12 events lost data bytes beyond the
// format's limit; 3 events lost ISO descriptors", or "" when none.
func (l Loss) String() string {
	var parts []string
	for r, n := range l.n {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d events lost %s", n, lossNames[r]))
		}
	}
	return strings.Join(parts, "; ")
}
