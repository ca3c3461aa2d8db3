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
// libipt's resync does. The flags EndOnCall and EndOnJump are set: the
// tracker sees every call and jump. sel, when not nil, is called with the
// time before each block and before each enable event (to switch the
// tracker's thread); when it returns an image, the decoder reads code
// from it from then on (the process that runs now).
func Decode(trace []byte, cfg intelpt.FlowConfig, tr *Tracker, sel func(tsc uint64) *intelpt.Image) error {
	return decode(trace, cfg, tr, sel, nil)
}

// decode is Decode calling progress, when not nil, every 65,536 blocks
// with the trace offset reached.
func decode(trace []byte, cfg intelpt.FlowConfig, tr *Tracker, sel func(tsc uint64) *intelpt.Image, progress func(off int64)) error {
	cfg.Flags.EndOnCall, cfg.Flags.EndOnJump = true, true
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
	status, err := d.SyncForward()
	for {
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			var fe *intelpt.FlowError
			if !errors.As(err, &fe) {
				return err
			}
			lastErr = err
			t := timeOf()
			tr.Gap(t, t, fmt.Sprintf("decode error: %v", err))
			if status, err = d.SyncForward(); err != nil && errors.Is(err, io.EOF) {
				break
			}
			continue
		}
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
			break
		}
		if sel != nil {
			if im := sel(timeOf()); im != nil {
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
		t := timeOf()
		tr.Block(blk.IP, blk.EndIP, blk.NInsn, blk.Class, size, indirect, t)
	}
	_ = lastErr
	return nil
}
