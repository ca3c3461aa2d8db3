package intelpt

// Time estimation from TSC, TMA, MTC and CYC packets, with CYC calibration,
// following the heuristics of libipt (whose ptdump output we reproduce).

// tcode is a libipt-style status; its text is what ptdump prints.
type tcode int

const (
	tOK tcode = iota
	tInternal
	tBadPacket
	tBadContext
	tBadConfig
	tNoTime
	tBadOpcode
	tEOS
	tNoSync
	tBadCPU
	tNoIP
)

var tcodeText = [...]string{
	tOK: "OK", tInternal: "internal error", tBadPacket: "unknown packet",
	tBadContext: "unexpected packet context", tBadConfig: "bad configuration",
	tNoTime: "no timing information", tBadOpcode: "unknown opcode",
	tEOS: "reached end of trace stream", tNoSync: "decoder out of sync",
	tBadCPU: "unknown cpu", tNoIP: "no ip",
}

func (c tcode) String() string { return tcodeText[c] }

// fcrShift is the fixed-point shift of the fast-counter:cycles ratio.
const fcrShift = 8

// ptTime estimates the TSC at each timing packet.
type ptTime struct {
	tsc, base, fc                      uint64
	ctc, ctcCyc, lostMTC, lostCyc      uint32
	cbr                                uint8
	haveTSC, haveCBR, haveTMA, haveMTC bool
}

func (t *ptTime) query() (uint64, tcode) {
	if !t.haveTSC {
		return t.tsc, tNoTime
	}
	return t.tsc, tOK
}

// ctcDelta returns ctc-last, allowing one wrap of the CTC bits MTC carries.
func ctcDelta(ctc, last uint32, cfg *Config) (uint32, tcode) {
	if ctc < last {
		ctc += 1 << (uint32(cfg.MTCFreq) + 8)
		if ctc < last {
			return 0, tBadPacket
		}
	}
	return ctc - last, tOK
}

// ctcToFC converts crystal clock ticks into TSC (fast counter) ticks.
func ctcToFC(ctc uint64, cfg *Config) (uint64, tcode) {
	if cfg.CPUID15EAX == 0 || cfg.CPUID15EBX == 0 {
		return 0, tBadConfig
	}
	return ctc * uint64(cfg.CPUID15EBX) / uint64(cfg.CPUID15EAX), tOK
}

func (t *ptTime) updateTSC(tsc uint64) tcode {
	t.haveTSC, t.haveTMA, t.haveMTC = true, false, false
	t.tsc, t.base = tsc, tsc
	t.ctc, t.fc = 0, 0
	t.lostMTC, t.lostCyc = 0, 0
	return tOK
}

func (t *ptTime) updateCBR(ratio uint8) tcode {
	if ratio == 0 {
		return tBadPacket
	}
	t.haveCBR, t.cbr = true, ratio
	return tOK
}

func (t *ptTime) updateTMA(ctc uint32, fc uint64, cfg *Config) tcode {
	if !t.haveTSC || t.haveTMA {
		return tBadContext
	}
	if t.haveMTC {
		return tInternal
	}
	hi := uint32(cfg.MTCFreq) + 8
	mask := uint32(1)<<hi - 1
	t.haveTMA = true
	t.base -= fc
	t.fc += fc
	// With few enough MTC bits the TMA's CTC is complete: use it as an MTC.
	if hi <= 16 {
		t.haveMTC = true
	}
	t.ctc = ctc & mask
	t.ctcCyc = t.ctc
	return tOK
}

func (t *ptTime) updateMTC(payload uint8, cfg *Config) tcode {
	haveTSC, haveTMA, haveMTC := t.haveTSC, t.haveTMA, t.haveMTC
	// MTCs between TSC and TMA are ignored.
	if haveTSC && !haveTMA {
		return tOK
	}
	base, last := t.base, t.ctc
	ctc := uint32(payload) << cfg.MTCFreq
	if t.fc != 0 || t.lostCyc != 0 || !haveMTC {
		t.ctcCyc = ctc
	}
	t.haveMTC = true
	t.fc = 0
	t.ctc = ctc
	t.lostCyc = 0
	if !haveMTC {
		if !haveTMA {
			return tOK
		}
		if last&^0xffff != 0 {
			return tInternal
		}
		// Estimate the CTC bits above those TMA gave from this MTC.
		lo, hi := ctc&0xffff, ctc&^uint32(0xffff)
		if lo < last {
			hi -= 1 << 16
			hi &= 0xff << cfg.MTCFreq
		}
		last |= hi
	}
	delta, c := ctcDelta(ctc, last, cfg)
	if c != tOK {
		t.lostMTC++
		return c
	}
	tsc, c := ctcToFC(uint64(delta), cfg)
	if c != tOK {
		return c
	}
	base += tsc
	t.tsc, t.base = base, base
	return tOK
}

// adjustCyc removes from a CYC that spans MTC periods the cycles estimated
// for the earlier periods.
func (t *ptTime) adjustCyc(cyc uint64, cfg *Config, fcr uint64) (uint64, tcode) {
	if fcr == 0 {
		return cyc, tInternal
	}
	if t.ctc == t.ctcCyc {
		return cyc, tOK
	}
	delta, c := ctcDelta(t.ctc, t.ctcCyc, cfg)
	if c != tOK {
		return cyc, c
	}
	fc, c := ctcToFC(uint64(delta), cfg)
	if c != tOK {
		return cyc, c
	}
	old := (fc << fcrShift) / fcr
	if cyc < old {
		cyc = old
	}
	return cyc - old, tOK
}

func (t *ptTime) updateCyc(value uint64, cfg *Config, fcr uint64) tcode {
	if fcr == 0 {
		t.lostCyc++
		return tOK
	}
	cyc, fc := value, t.fc
	if fc == 0 {
		var c tcode
		if cyc, c = t.adjustCyc(cyc, cfg, fcr); c != tOK {
			return c
		}
	}
	fc += (cyc * fcr) >> fcrShift
	t.fc = fc
	t.tsc = t.base + fc
	return tOK
}

// tcal calibrates the cycles to fast counter ratio (FCR).
type tcal struct {
	fcr, minFCR, maxFCR, tsc, cycTSC, cycMTC uint64
	ctc, lostMTC                             uint32
	haveMTC, checkSKL168                     bool
}

func newTCal() tcal { return tcal{minFCR: ^uint64(0)} }

func (c *tcal) haveFCR() bool { return c.minFCR <= c.maxFCR }

func (c *tcal) getFCR() (uint64, tcode) {
	if !c.haveFCR() {
		return 0, tNoTime
	}
	return c.fcr, tOK
}

func (c *tcal) setFCR(fcr uint64) tcode {
	c.fcr = fcr
	c.minFCR = min(c.minFCR, fcr)
	c.maxFCR = max(c.maxFCR, fcr)
	return tOK
}

func (c *tcal) updatePSB(cfg *Config) tcode {
	if cfg.Errata.SKL168 {
		c.checkSKL168 = true
	}
	return tOK
}

// updateTSC handles a TSC outside PSB+: remembered, not used for calibration.
func (c *tcal) updateTSC(tsc uint64) tcode {
	c.tsc, c.cycTSC = tsc, 0
	return tOK
}

// headerTSC handles a TSC inside PSB+.
func (c *tcal) headerTSC(tsc uint64) tcode {
	last, cyc := c.tsc, c.cycTSC
	c.tsc, c.cycTSC = tsc, 0
	if last == 0 || cyc == 0 || c.haveMTC {
		return tOK
	}
	if tsc < last {
		tsc += 1 << 56
		if tsc < last {
			return tBadPacket
		}
	}
	d := tsc - last
	if d&^(^uint64(0)>>fcrShift) != 0 {
		return tInternal
	}
	return c.setFCR((d << fcrShift) / cyc)
}

// updateCBR handles a CBR outside PSB+: a frequency change.
func (c *tcal) updateCBR(ratio uint8, cfg *Config) tcode {
	*c = newTCal()
	return c.headerCBR(ratio, cfg)
}

func (c *tcal) headerCBR(ratio uint8, cfg *Config) tcode {
	if cfg.NomFreq == 0 {
		return tOK
	}
	if ratio == 0 {
		return tBadPacket
	}
	return c.setFCR((uint64(cfg.NomFreq) << fcrShift) / uint64(ratio))
}

func (c *tcal) updateMTC(payload uint8, cfg *Config) tcode {
	last, have, cyc, check := c.ctc, c.haveMTC, c.cycMTC, c.checkSKL168
	c.checkSKL168 = false
	ctc := uint32(payload) << cfg.MTCFreq
	if !have {
		c.cycMTC, c.ctc, c.haveMTC = 0, ctc, true
		return tOK
	}
	if cyc == 0 {
		return tOK
	}
	c.haveMTC, c.cycMTC, c.ctc = true, 0, ctc
	c.lostMTC++
	delta, e := ctcDelta(ctc, last, cfg)
	if e != tOK {
		return e
	}
	fc, e := ctcToFC(uint64(delta), cfg)
	if e != tOK {
		return e
	}
	if fc&^(^uint64(0)>>fcrShift) != 0 {
		return tInternal
	}
	fcr := (fc << fcrShift) / cyc
	if check {
		// SKL168: CYC packets right before PSB may be lost; skip this MTC
		// if MTCs were lost or a wrap CYC seems to be missing.
		if uint32(1)<<cfg.MTCFreq < delta {
			return tOK
		}
		if cfg.MTCFreq < 10 && c.haveFCR() {
			dfc := (c.fcr * (cyc + 0xf00)) >> fcrShift
			if dfc < fc {
				return tOK
			}
		}
	}
	c.setFCR(fcr)
	c.lostMTC = 0
	return tOK
}

func (c *tcal) updateCyc(value uint64) tcode {
	c.cycMTC += value
	c.cycTSC += value
	return tOK
}

func (c *tcal) updateOVF() tcode {
	c.tsc, c.cycTSC, c.cycMTC, c.ctc, c.haveMTC = 0, 0, 0, 0, false
	return tOK
}
