package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/regdb"
)

// MMIO is the summary of one mmiotrace log.
type MMIO struct {
	Stats *mmiotrace.Stats
	// Name names a register with the shipped register database of its
	// device, "" when there is none.
	Name func(mmiotrace.RegKey) string `json:"-"`
	// BARs holds the accesses over time per BAR (or "outside known BARs").
	BARs []*MMIOBAR
	// Regs holds the accesses and values over time of the registers, in
	// the order of Stats.Regs, for the first MaxTrackedRegs registers
	// met in the log.
	Regs []*MMIOReg
	// LostMarksNS are the times of the kernel's "Lost N events." marks.
	LostMarksNS []int64
	// Loss describes lost events and skipped lines, "" when none.
	Loss string
}

// MMIOBAR is what the report plots for one BAR.
type MMIOBAR struct {
	Name     string
	Accesses Series
}

// MMIOReg is what the report plots for one register.
type MMIOReg struct {
	Key      mmiotrace.RegKey
	Accesses Series
	Values   ValueSeries
}

// MaxTrackedRegs bounds the registers whose time series are kept.
const MaxTrackedRegs = 4096

// MMIOOptions tune AnalyzeMMIO; the zero value is the defaults of
// 'iotap mmio stats' and 'iotap report': a line that does not parse is
// skipped and counted as loss (MMIO.Loss).
type MMIOOptions struct {
	// Stats tunes the counts; its KeepGoing is not read (StopAtBadLine
	// decides).
	Stats   mmiotrace.StatsOptions
	NoNames bool
	// StopAtBadLine makes a line that does not parse an error naming it
	// (mmio stats --keep-going=false) instead of a counted loss.
	StopAtBadLine bool
}

// AnalyzeMMIO summarises the mmiotrace log at path (plain or compressed):
// mmiotrace.Analyze's counts, hot registers and polling loops, plus the
// time series the HTML report plots (a second pass over the log).
func AnalyzeMMIO(ctx context.Context, path string, o MMIOOptions) (*MMIO, *Span, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("mmio: %w", err)
	}
	so := o.Stats
	so.KeepGoing = !o.StopAtBadLine
	st, err := mmiotrace.Analyze(f, so)
	f.Close()
	if err != nil {
		return nil, nil, err
	}
	m := &MMIO{Stats: st}
	if !o.NoNames {
		m.Name = new(regdb.Binder).RegisterNames(st)
	} else {
		m.Name = func(mmiotrace.RegKey) string { return "" }
	}
	m.Loss = mmioLoss(st.Lost, st.Skipped)
	if st.Truncated {
		if m.Loss != "" {
			m.Loss += "; "
		}
		m.Loss += fmt.Sprintf("the log is cut: it ends inside line %d", st.Lines)
	}
	span, err := m.series(ctx, path, so.KeepGoing)
	if err != nil {
		return nil, nil, err
	}
	return m, span, nil
}

func mmioLoss(lost uint64, skipped int64) string {
	msg := ""
	if lost > 0 {
		msg = fmt.Sprintf("the log records %d lost events (kernel \"Lost N events.\" marks): the trace is incomplete", lost)
	}
	if skipped > 0 {
		if msg != "" {
			msg += "; "
		}
		msg += fmt.Sprintf("%d bad lines skipped", skipped)
	}
	return msg
}

func (m *MMIO) series(ctx context.Context, path string, keepGoing bool) (*Span, error) {
	rd, err := mmiotrace.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mmio: %w", err)
	}
	defer rd.Close()
	rd.DropBehind() // nothing of a record is kept: memory flat in the log's size
	rd.SetKeepGoing(keepGoing)
	bm := mmiotrace.NewBARMap()
	bars := map[string]*MMIOBAR{}
	var barOrder []*MMIOBAR
	regs := map[mmiotrace.RegKey]*MMIOReg{}
	span := &Span{}
	var rec mmiotrace.Record
	for n := 0; ; n++ {
		if n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		err := rd.ReadInto(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		bm.Observe(&rec)
		t := int64(rec.Time.NS)
		switch rec.Kind {
		case mmiotrace.KindRead, mmiotrace.KindWrite:
		case mmiotrace.KindMark:
			if _, ok := rec.Lost(); ok {
				m.LostMarksNS = append(m.LostMarksNS, t)
				span.add(t)
			}
			continue
		default:
			continue
		}
		span.add(t)
		k := mmiotrace.KeyOf(bm, &rec)
		bn := "outside known BARs"
		if k.HasBAR {
			bn = fmt.Sprintf("%s/%d", k.Dev, k.BAR)
		}
		b := bars[bn]
		if b == nil {
			b = &MMIOBAR{Name: bn}
			bars[bn] = b
			barOrder = append(barOrder, b)
		}
		b.Accesses.Add(t, 1)
		r := regs[k]
		if r == nil {
			if len(regs) >= MaxTrackedRegs {
				continue
			}
			r = &MMIOReg{Key: k}
			regs[k] = r
		}
		r.Accesses.Add(t, 1)
		r.Values.Add(t, rec.Value)
	}
	m.BARs = barOrder
	for _, s := range m.Stats.Regs {
		if r := regs[s.Key]; r != nil {
			m.Regs = append(m.Regs, r)
		}
	}
	return span, nil
}

// MMIOTextOptions tune WriteMMIOText; the zero value lists 20 registers.
type MMIOTextOptions struct {
	Top int
}

// WriteMMIOText prints the summary of 'iotap mmio stats': records per
// kind, maps, hot registers and polling loops.
func WriteMMIOText(w io.Writer, st *mmiotrace.Stats, name func(mmiotrace.RegKey) string, o MMIOTextOptions) {
	top := o.Top
	if top == 0 {
		top = 20
	}
	fmt.Fprintf(w, "lines %d", st.Lines)
	for k, n := range st.Kinds {
		if n > 0 {
			fmt.Fprintf(w, ", %s %d", mmiotrace.Kind(k), n)
		}
	}
	fmt.Fprintf(w, "\nlost events %d, skipped lines %d\n\nmaps:\n", st.Lost, st.Skipped)
	for _, m := range st.Maps {
		fmt.Fprintf(w, "  map %-4d 0x%x+0x%x  reads %d  writes %d\n", m.ID, m.Phys, m.Len, m.Reads, m.Writes)
	}
	fmt.Fprintf(w, "\nhot registers (%d of %d):\n", min(top, len(st.Regs)), len(st.Regs))
	for i, r := range st.Regs {
		if i >= top {
			break
		}
		fmt.Fprintf(w, "  %-24s %-10s w%d  reads %-8d writes %-8d last 0x%x", r.Key, name(r.Key), r.Key.Width, r.Reads, r.Writes, r.LastValue)
		if r.PollLoops > 0 {
			fmt.Fprintf(w, "  (%d polling loops, %d reads)", r.PollLoops, r.PollReads)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\npolling loops: %d\n", st.LoopCount)
	for _, l := range st.Loops {
		reg := l.Key.String()
		if n := name(l.Key); n != "" {
			reg = n + " (" + reg + ")"
		}
		fmt.Fprintf(w, "  line %d: read %s %d times %s (%s..%s)\n", l.Line, reg, l.Count, l.Describe(), l.StartTime, l.EndTime)
	}
}
