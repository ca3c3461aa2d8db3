package usb

import (
	"math/bits"

	"github.com/iotap/iotap/usbmon"
)

// pendingTable is the Pairer's table of submissions waiting for their
// completion: open addressing with linear probing and backward-shift
// deletion, keyed by Key. It replaces a Go map, whose generic hashing of
// the 16-byte Key and whose tombstones made pairing a tenth of 'usb read'
// (docs/performance.md); TestPendingTableMatchesMap checks it against a
// map under random inserts, lookups and deletes.
//
// A slot keeps the key as two words, the URB id and a tag packing the
// rest with a "used" bit, so that a probe compares two integers; the
// callers on the pairing path (Pairer.addInto) pass the tag they computed
// once.
type pendingTable struct {
	slots []pendingSlot // len is a power of two, or 0
	n     int
	shift uint8 // 64 - log2(len(slots))
}

type pendingSlot struct {
	id  uint64
	tag uint64 // keyTag; 0: the slot is free
	s   Submission
}

// keyTag packs the fields of k other than ID, with bit 63 set so that a
// used slot's tag is never 0.
func keyTag(k Key) uint64 {
	return 1<<63 | uint64(k.Bus) | uint64(k.Device)<<16 | uint64(k.Endpoint)<<24 | uint64(k.Transfer)<<32
}

// eventTag is keyTag(KeyOf(ev)).
func eventTag(ev *usbmon.Event) uint64 {
	ep := uint64(ev.Endpoint)
	if ev.In {
		ep |= 0x80
	}
	return 1<<63 | uint64(ev.Bus) | uint64(ev.Device)<<16 | ep<<24 | uint64(ev.Transfer)<<32
}

// key is keyTag's inverse.
func (sl *pendingSlot) key() Key {
	return Key{ID: sl.id, Bus: uint16(sl.tag), Device: uint8(sl.tag >> 16), Endpoint: uint8(sl.tag >> 24),
		Transfer: usbmon.TransferType(sl.tag >> 32)}
}

// home returns where the probe for (id, tag) starts: the top bits of a
// Fibonacci hash.
func (t *pendingTable) home(id, tag uint64) int {
	return int((id ^ tag<<40 ^ tag>>8) * 0x9e3779b97f4a7c15 >> t.shift)
}

// findTag returns the slot of (id, tag), or the free slot where it would
// go, and whether it is there. The table must not be empty.
// It is small enough to be inlined in slotFor and removeTag.
func (t *pendingTable) findTag(id, tag uint64) (int, bool) {
	mask := len(t.slots) - 1
	for i := t.home(id, tag); ; i = (i + 1) & mask {
		if sl := &t.slots[i]; sl.tag == tag && sl.id == id || sl.tag == 0 {
			return i, sl.tag != 0
		}
	}
}

func (t *pendingTable) find(k Key) (int, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	return t.findTag(k.ID, keyTag(k))
}

func (t *pendingTable) len() int { return t.n }

func (t *pendingTable) get(k Key) (Submission, bool) {
	i, ok := t.find(k)
	if !ok {
		return Submission{}, false
	}
	return t.slots[i].s, true
}

// put sets k's submission, adding k if it is not there.
func (t *pendingTable) put(k Key, s Submission) {
	i, ok := t.slotFor(k.ID, keyTag(k))
	t.set(i, ok, k.ID, keyTag(k), s)
}

// slotFor returns (id, tag)'s slot and whether it is there; the table
// has room to add it at that slot (set).
func (t *pendingTable) slotFor(id, tag uint64) (int, bool) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	return t.findTag(id, tag)
}

// set stores the submission of (id, tag) at slot i from slotFor (found:
// it was there).
func (t *pendingTable) set(i int, found bool, id, tag uint64, s Submission) {
	if !found {
		t.n++
	}
	t.slots[i] = pendingSlot{id: id, tag: tag, s: s}
}

func (t *pendingTable) grow() {
	old := t.slots
	n := 2 * len(old)
	if n < 64 {
		n = 64
	}
	t.slots = make([]pendingSlot, n)
	t.shift = uint8(64 - bits.TrailingZeros(uint(n)))
	mask := n - 1
	for _, sl := range old {
		if sl.tag == 0 {
			continue
		}
		i := t.home(sl.id, sl.tag)
		for t.slots[i].tag != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = sl
	}
}

// remove deletes k's entry and returns its submission.
func (t *pendingTable) remove(k Key) (Submission, bool) {
	var s Submission
	ok := len(t.slots) != 0 && t.removeTag(k.ID, keyTag(k), &s)
	return s, ok
}

// removeTag deletes the entry of (id, tag), storing its submission in
// *s. The table must not be empty.
func (t *pendingTable) removeTag(id, tag uint64, s *Submission) bool {
	i, ok := t.findTag(id, tag)
	if !ok {
		return false
	}
	*s = t.slots[i].s
	t.removeAt(i)
	return true
}

// removeAt deletes the entry at slot i.
func (t *pendingTable) removeAt(i int) {
	t.n--
	if t.slots[(i+1)&(len(t.slots)-1)].tag != 0 {
		t.shiftBack(i)
	} else {
		t.slots[i].tag = 0
	}
}

// shiftBack empties slot i by a backward shift: it moves later entries of
// the probe run into the hole when their home position allows it, so
// lookups never need tombstones.
func (t *pendingTable) shiftBack(i int) {
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].tag != 0; j = (j + 1) & mask {
		h := t.home(t.slots[j].id, t.slots[j].tag)
		// The entry at j may fill the hole at i if its home is not in
		// the cyclic interval (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i].tag = 0
}

// each calls fn for every entry, in no particular order.
func (t *pendingTable) each(fn func(k Key, s Submission)) {
	for i := range t.slots {
		if sl := &t.slots[i]; sl.tag != 0 {
			fn(sl.key(), sl.s)
		}
	}
}
