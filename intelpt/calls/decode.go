package calls

import (
	"errors"
	"fmt"
	"io"

	"github.com/iotap/iotap/intelpt"
)

// Decode runs the block flow decoder over one thread's trace (a
// per-thread stream) and feeds the tracker. Flow errors (no code at an IP,
// a bad packet) become gaps and decoding resumes at the next PSB, as
// libipt's resync does. The tracker sees every call: a block ends at each
// call (FlowFlags.CallsInBlock: or holds one direct call inside), and at
// each jump unless the current thread's Symbolizer names no code at all
// (then no jump can be a tail call). Conditional branches end a block only
// where their TNT packet ends (FlowFlags.CondInBlock: the tracker has nothing
// to do at them). sel, when not nil, is called with the
// time before each block and before each enable event (to switch the
// tracker's thread); when it returns an image, the decoder reads code
// from it from then on (the process that runs now).
func Decode(trace []byte, cfg intelpt.FlowConfig, tr *Tracker, sel func(tsc uint64) *intelpt.Image) error {
	_, err := decode(trace, cfg, tr, sel, nil)
	return err
}

// decode is Decode calling progress, when not nil, every 65,536 blocks
// with the trace offset reached. It returns the offset of the packet the
// trace ends inside, -1 when it ends at a packet boundary (found where
// the decoder stopped: intelpt.TruncatedFrom, not a second reading).
func decode(trace []byte, cfg intelpt.FlowConfig, tr *Tracker, sel func(tsc uint64) *intelpt.Image, progress func(off int64)) (int64, error) {
	cfg.Flags.EndOnCall, cfg.Flags.CallsInBlock, cfg.Flags.EndOnJump, cfg.Flags.CondInBlock = false, true, true, true
	if sel == nil && tr.cur != nil {
		if s, ok := tr.cur.sym.(interface{ namesNone() bool }); ok && s.namesNone() {
			cfg.Flags.EndOnJump = false
		}
	}
	return decodeFlags(trace, cfg, tr, sel, progress)
}

// decodeFlags is decode with the decoder's flags as cfg has them.
func decodeFlags(trace []byte, cfg intelpt.FlowConfig, tr *Tracker, sel func(tsc uint64) *intelpt.Image, progress func(off int64)) (int64, error) {
	d := intelpt.NewBlockDecoder(trace, cfg)
	var (
		now     uint64
		blk     intelpt.Block
		ev      intelpt.Event
		lastErr error
		nblk    uint64
	)
	timeOf := func() uint64 {
		if t, _, _, ok := d.Time(); ok {
			now = t
		}
		return now
	}
	// stop is where decoding stopped, a packet boundary after the first
	// PSB: the trace's end, or the packet a decoding error left when no
	// PSB follows it; -1 when the decoder never synchronised (a PSB+ cut
	// or damaged: the packets are then read from the first PSB).
	stop, synced := int64(-1), false
	status, err := d.SyncForward()
	for {
		if err != nil {
			if synced {
				stop = d.Offset()
			}
			if errors.Is(err, io.EOF) {
				break
			}
			var fe *intelpt.FlowError
			if !errors.As(err, &fe) {
				return -1, err
			}
			lastErr = err
			t := timeOf()
			tr.Gap(t, t, fmt.Sprintf("decode error: %v", err))
			if status, err = d.SyncForward(); err != nil && errors.Is(err, io.EOF) {
				break
			}
			continue
		}
		synced = true
		for status&intelpt.StatusEventPending != 0 && err == nil {
			status, err = d.Event(&ev)
			if err != nil || ev.StatusUpdate {
				continue
			}
			t := now
			if ev.HasTSC {
				t = ev.TSC
			}
			switch ev.Type {
			case intelpt.EvEnabled:
				if sel != nil {
					if im := sel(t); im != nil {
						d.SetImage(im)
					}
				}
				tr.Enabled(ev.IP, t)
			case intelpt.EvDisabled, intelpt.EvAsyncDisabled:
				tr.Disabled(t)
			case intelpt.EvOverflow:
				tr.Gap(t, t, "overflow: the CPU lost trace")
			}
		}
		if err != nil {
			continue
		}
		if status&intelpt.StatusEOS != 0 {
			stop = d.Offset()
			break
		}
		// the time before the block: the thread that runs it, and when a
		// call inside it is made (as when the call ended a block)
		before := timeOf()
		if sel != nil {
			if im := sel(before); im != nil {
				d.SetImage(im)
			}
		}
		status, err = d.Next(&blk)
		if nblk++; nblk&0xffff == 0 && progress != nil {
			progress(d.Offset())
		}
		if blk.NInsn == 0 {
			continue
		}
		var size uint8
		indirect := false
		switch blk.Class {
		case intelpt.ClassCall, intelpt.ClassFarCall, intelpt.ClassJump:
			// the decoder knows the last instruction: no second decode
			size = blk.EndSize
			indirect = blk.Class != intelpt.ClassFarCall && !blk.EndDirect
		}
		if blk.CallRet != 0 {
			// a direct call inside: the instructions up to it, then the
			// callee's (the call's end address stands for the call: the
			// tracker only needs where it returns)
			tr.Block(blk.IP, blk.CallRet, blk.CallInsn, intelpt.ClassCall, 0, false, before)
			blk.IP, blk.NInsn = blk.CallTarget, blk.NInsn-blk.CallInsn
		}
		t := timeOf()
		tr.Block(blk.IP, blk.EndIP, blk.NInsn, blk.Class, size, indirect, t)
	}
	_ = lastErr
	return intelpt.TruncatedFrom(trace, stop, cfg.Config), nil
}
