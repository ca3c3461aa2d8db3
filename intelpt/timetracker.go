package intelpt

// TimeTracker estimates the TSC along a packet stream from TSC, TMA, MTC
// and CYC packets (with CYC calibration from CBR and the nominal ratio or
// from MTC/TSC), with the same heuristics as the dump's --time.
type TimeTracker struct {
	cfg      Config
	t        ptTime
	cal      tcal
	inHeader bool
}

// NewTimeTracker returns a tracker for a trace recorded with cfg.
func NewTimeTracker(cfg Config) *TimeTracker {
	return &TimeTracker{cfg: cfg, cal: newTCal()}
}

// Reset forgets all timing state (after a decoding error and resync).
func (tt *TimeTracker) Reset() {
	tt.t, tt.cal, tt.inHeader = ptTime{}, newTCal(), false
}

// Update advances the estimate with packet p. It reports whether p is a
// timing packet whose estimate changed (TSC, TMA, MTC, CYC).
func (tt *TimeTracker) Update(p *Packet) bool {
	cfg := &tt.cfg
	switch p.Kind {
	case KindPSB:
		tt.cal.updatePSB(cfg)
		tt.inHeader = true
	case KindPSBEnd:
		tt.inHeader = false
	case KindOVF:
		tt.cal = newTCal()
	case KindTSC:
		if tt.inHeader {
			tt.cal.headerTSC(p.Payload)
		} else {
			tt.cal.updateTSC(p.Payload)
		}
		tt.t.updateTSC(p.Payload)
		return true
	case KindCBR:
		if tt.inHeader {
			tt.cal.headerCBR(uint8(p.Payload), cfg)
		} else {
			tt.cal.updateCBR(uint8(p.Payload), cfg)
		}
		tt.t.updateCBR(uint8(p.Payload))
	case KindTMA:
		tt.t.updateTMA(uint32(p.Payload), uint64(p.Aux), cfg)
		return true
	case KindMTC:
		tt.cal.updateMTC(uint8(p.Payload), cfg)
		tt.t.updateMTC(uint8(p.Payload), cfg)
		return true
	case KindCYC:
		fcr, c := tt.cal.getFCR()
		if c != tOK {
			fcr = 0
		}
		tt.cal.updateCyc(p.Payload)
		tt.t.updateCyc(p.Payload, cfg, fcr)
		return fcr != 0
	}
	return false
}

// TSC returns the current estimate; ok is false before the first TSC.
func (tt *TimeTracker) TSC() (tsc uint64, ok bool) {
	v, c := tt.t.query()
	return v, c == tOK
}
