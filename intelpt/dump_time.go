package intelpt

import "strconv"

// Timing columns of the dump (ptdump --time / --tcal).

func (dp *dumper) calErr(off uint64, c tcode) {
	if c != tOK {
		dp.diag("error calibrating time", off, c)
	}
}

func (dp *dumper) timeErr(off uint64, c tcode) {
	if c != tOK {
		dp.diag("error updating time", off, c)
	}
}

func (dp *dumper) trackTSC(off uint64, tsc uint64) {
	if !dp.opt.NoTCal {
		if dp.inHeader {
			dp.calErr(off, dp.tcal.headerTSC(tsc))
		} else {
			dp.calErr(off, dp.tcal.updateTSC(tsc))
		}
	}
	dp.timeErr(off, dp.time.updateTSC(tsc))
	dp.trackTime(off)
}

func (dp *dumper) trackCBR(off uint64, ratio uint8) {
	if !dp.opt.NoTCal {
		if dp.inHeader {
			dp.calErr(off, dp.tcal.headerCBR(ratio, &dp.cfg))
		} else {
			dp.calErr(off, dp.tcal.updateCBR(ratio, &dp.cfg))
		}
	}
	dp.timeErr(off, dp.time.updateCBR(ratio))
	dp.skipT = true
	dp.trackTime(off)
}

func (dp *dumper) trackTMA(off uint64, p *Packet) {
	dp.timeErr(off, dp.time.updateTMA(uint32(p.Payload), uint64(p.Aux), &dp.cfg))
	dp.skipCal = true
	dp.trackTime(off)
}

func (dp *dumper) trackMTC(off uint64, ctc uint8) {
	if !dp.opt.NoTCal {
		dp.calErr(off, dp.tcal.updateMTC(ctc, &dp.cfg))
	}
	dp.timeErr(off, dp.time.updateMTC(ctc, &dp.cfg))
	dp.trackTime(off)
}

func (dp *dumper) trackCyc(off uint64, cyc uint64) {
	var fcr uint64
	if !dp.opt.NoTCal {
		var c tcode
		if fcr, c = dp.tcal.getFCR(); c != tOK {
			dp.diag("calibration error", off, c)
			fcr = 0
		}
		dp.calErr(off, dp.tcal.updateCyc(cyc))
	}
	if c := dp.time.updateCyc(cyc, &dp.cfg, fcr); c != tOK {
		dp.timeErr(off, c)
	} else if fcr == 0 {
		dp.diag("error updating time: no calibration", off, tOK)
	}
	dp.skipCal = true
	dp.trackTime(off)
}

func (dp *dumper) trackTime(off uint64) {
	if dp.opt.TCal && !dp.skipCal {
		dp.printTCal(off)
	}
	if dp.opt.Time && !dp.skipT {
		dp.printTime(off)
	}
}

func (dp *dumper) printTime(off uint64) {
	dp.id = append(dp.id[:0], "tsc"...)
	tsc, c := dp.time.query()
	if c != tOK && !(c == tNoTime && dp.opt.NoWallClock) {
		dp.diag("error printing time", off, c)
		dp.tp = append(dp.tp[:0], "<unavailable>"...)
		return
	}
	dp.tp = dp.tp[:0]
	if dp.opt.TimeDelta {
		if dp.tsc <= tsc {
			dp.tp = append(dp.tp, '+')
			dp.tp = strconv.AppendUint(dp.tp, tsc-dp.tsc, 16)
		} else {
			dp.tp = append(dp.tp, '-')
			dp.tp = strconv.AppendUint(dp.tp, dp.tsc-tsc, 16)
		}
		dp.tsc = tsc
	} else {
		dp.tp = hex16(dp.tp, tsc)
	}
}

func (dp *dumper) printTCal(off uint64) {
	dp.id = append(dp.id[:0], "fcr"...)
	fcr, c := dp.tcal.getFCR()
	if c != tOK {
		dp.tp = append(dp.tp[:0], "<unavailable>"...)
		dp.diag("error printing time", off, c)
		return
	}
	v := float64(fcr) / float64(1<<fcrShift)
	dp.tp = dp.tp[:0]
	if dp.opt.TimeDelta {
		old := float64(dp.fcr) / float64(1<<fcrShift)
		d := v - old
		if d >= 0 || (d == 0) {
			dp.tp = append(dp.tp, '+')
		}
		dp.tp = strconv.AppendFloat(dp.tp, d, 'f', 3, 64)
		dp.fcr = fcr
	} else {
		dp.tp = strconv.AppendFloat(dp.tp, v, 'f', 3, 64)
	}
}
