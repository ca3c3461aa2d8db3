package usb

// pendingTable is the Pairer's table of submissions waiting for their
// completion: open addressing with linear probing and backward-shift
// deletion, keyed by Key. It replaces a Go map, whose generic hashing of
// the 16-byte Key and whose tombstones made pairing a tenth of 'usb read'
// (docs/performance.md); TestPendingTableMatchesMap checks it against a
// map under random inserts, lookups and deletes.
type pendingTable struct {
	slots []pendingSlot // len is a power of two, or 0
	n     int
}

type pendingSlot struct {
	used bool
	k    Key
	s    Submission
}

// slot returns where k's home probe starts.
func (t *pendingTable) home(k Key) int {
	x := k.ID ^ uint64(k.Bus)<<40 ^ uint64(k.Device)<<24 ^ uint64(k.Endpoint)<<16 ^ uint64(k.Transfer)<<56
	x *= 0x9e3779b97f4a7c15
	x ^= x >> 29
	return int(x & uint64(len(t.slots)-1))
}

func (t *pendingTable) find(k Key) (int, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	mask := len(t.slots) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		sl := &t.slots[i]
		if !sl.used {
			return i, false
		}
		if sl.k == k {
			return i, true
		}
	}
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
	i, ok := t.slotFor(k)
	t.set(i, ok, k, s)
}

// slotFor returns k's slot and whether k is there; the table has room to
// add k at that slot (set).
func (t *pendingTable) slotFor(k Key) (int, bool) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	return t.find(k)
}

// set stores k's submission at slot i from slotFor (found: k was there).
func (t *pendingTable) set(i int, found bool, k Key, s Submission) {
	if !found {
		t.n++
	}
	t.slots[i] = pendingSlot{used: true, k: k, s: s}
}

func (t *pendingTable) grow() {
	old := t.slots
	n := 2 * len(old)
	if n < 64 {
		n = 64
	}
	t.slots = make([]pendingSlot, n)
	mask := n - 1
	for _, sl := range old {
		if !sl.used {
			continue
		}
		i := t.home(sl.k)
		for t.slots[i].used {
			i = (i + 1) & mask
		}
		t.slots[i] = sl
	}
}

// remove deletes k's entry and returns its submission.
func (t *pendingTable) remove(k Key) (Submission, bool) {
	i, ok := t.find(k)
	if !ok {
		return Submission{}, false
	}
	s := t.slots[i].s
	t.n--
	// Backward shift: move later entries of the probe run into the hole
	// when their home position allows it, so lookups never need
	// tombstones.
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].used; j = (j + 1) & mask {
		h := t.home(t.slots[j].k)
		// The entry at j may fill the hole at i if its home is not in
		// the cyclic interval (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = pendingSlot{}
	return s, true
}

// each calls fn for every entry, in no particular order.
func (t *pendingTable) each(fn func(k Key, s Submission)) {
	for i := range t.slots {
		if sl := &t.slots[i]; sl.used {
			fn(sl.k, sl.s)
		}
	}
}
