package intelpt

import "encoding/binary"

// The PSB payload repeats the two bytes 02 82; an aligned 64-bit word inside
// a PSB holds that pair in one of two phases.
const (
	psbWordLoHi = 0x8202820282028202 // bytes 02 82 02 82 ... (little endian)
	psbWordHiLo = 0x0282028202820282 // bytes 82 02 82 02 ...
)

// SyncForward moves the decoder to the next PSB packet after the current
// position (a PSB that starts up to 15 bytes before it, partly consumed by a
// bad packet, is found too). It returns a *DecodeError wrapping ErrNoSync
// when there is none. Like libipt, it scans aligned 64-bit words, so a run
// of more than one PSB's worth of pattern synchronises on its last 16 bytes.
func (d *Decoder) SyncForward() error {
	pos := d.pos
	if pos == d.sync {
		pos += psbSize
	}
	if pos > len(d.buf) {
		pos = len(d.buf)
	}
	pos -= min(pos, psbSize-1)
	at, _ := d.scanPSB(pos, pos, len(d.buf))
	if at < 0 {
		return decodeErr(d.pos, ErrNoSync)
	}
	d.pos, d.sync, d.block = at, at, 0
	return nil
}

// scanPSB looks for a PSB at or after start in the aligned 64-bit words
// from from on that end at or before limit. It returns the PSB's offset or
// -1, and the first word it did not scan.
func (d *Decoder) scanPSB(from, start, limit int) (int, int) {
	w := (from + 7) &^ 7
	for {
		cur := w
		w += 8
		if w > limit {
			return -1, cur
		}
		v := binary.LittleEndian.Uint64(d.buf[cur:])
		if v != psbWordLoHi && v != psbWordHiLo {
			continue
		}
		if at := d.findPSB(cur); at >= start {
			return at, w
		}
	}
}

// SyncBackward moves the decoder to the previous PSB packet before the
// current position (from the end of the trace on a fresh decoder).
func (d *Decoder) SyncBackward() error {
	pos := d.pos
	if d.sync < 0 && pos == 0 {
		pos = len(d.buf)
	}
	w := pos &^ 7
	for {
		w -= 8
		if w < 0 {
			return decodeErr(d.pos, ErrNoSync)
		}
		v := binary.LittleEndian.Uint64(d.buf[w:])
		if v != psbWordLoHi && v != psbWordHiLo {
			continue
		}
		if at := d.findPSB(w); at >= 0 {
			d.pos, d.sync, d.block = at, at, 0
			return nil
		}
	}
}

// findPSB walks from a word of PSB pattern at off to the end of the pattern
// run and returns the start of the PSB ending there, or -1.
func (d *Decoder) findPSB(off int) int {
	b := d.buf
	p := off
	if b[p] != opcExt {
		p++
	}
	for p+1 < len(b) && b[p] == opcExt && b[p+1] == extPSB {
		p += 2
	}
	p -= psbSize
	if p < 0 || !isPSB(b[p:]) {
		return -1
	}
	return p
}
