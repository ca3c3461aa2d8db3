package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/mmiotrace"
)

// HTML limits: what one trace contributes to the page, whatever its size.
const (
	htmlMaxLines      = 10 // lines per time chart
	htmlMaxLatency    = 16 // latency histograms per USB trace
	htmlMaxHeatRows   = 24 // registers in the heatmap
	htmlMaxHotRegs    = 20 // registers in the hot-register chart and table
	htmlMaxValueRegs  = 4  // value-over-time charts per MMIO trace
	htmlMaxEventPlots = 8  // field charts per user_events trace
	htmlMaxDevices    = 64 // rows of the USB device table
)

// HTMLOptions tune WriteHTML.
type HTMLOptions struct {
	// Title of the page ("iotap report" when empty).
	Title string
	// Unidentified is said of a USB device whose identity the capture
	// does not hold (a remedy naming a real command).
	Unidentified string
	// Timeline, when set, is the Perfetto timeline written with the
	// report: the page links it (and its detail windows).
	Timeline *TimelineLinks
}

// axis is the report's shared time axis: trace time t (ns, on the trace's
// clock) is at (t + OffsetNS + shift) / 1e9 seconds.
type axis struct {
	shift int64
	timeAxis
}

func (r *Report) axis() axis {
	var a axis
	first := true
	var lo int64
	for _, t := range r.Traces {
		if !t.Span.Set {
			continue
		}
		if s := t.Span.FirstNS + t.OffsetNS; first || s < lo {
			lo, first = s, false
		}
	}
	if lo < 0 {
		a.shift = -lo
	}
	end := 0.0
	for _, t := range r.Traces {
		if t.Span.Set {
			end = max(end, a.sec(t, t.Span.LastNS))
		}
	}
	if end == 0 {
		end = 1
	}
	a.timeAxis = timeAxis{0, end}
	return a
}

func (a axis) sec(t *Trace, ns int64) float64 {
	return float64(ns+t.OffsetNS+a.shift) / 1e9
}

// displayBins is the number of bins across the whole axis that the time
// charts draw: series are re-binned onto this grid (never finer than their
// own bins), so that traces of different lengths are drawn alike.
const displayBins = 200

func (a axis) grid(binNS int64, n int) float64 {
	return max((a.t1-a.t0)/float64(n), float64(binNS)/1e9)
}

// sums re-bins s onto the display grid of n bins: sums per bin, divided
// by the bin width when perSecond.
func (a axis) sums(t *Trace, name string, s *Series, n int, perSecond bool) stepSeries {
	if s.BinNS == 0 {
		return stepSeries{name: name}
	}
	d := a.grid(s.BinNS, n)
	start := a.sec(t, s.StartNS)
	i0 := math.Floor(start / d)
	ss := stepSeries{name: name, startS: i0 * d, binS: d}
	for i, v := range s.Bins {
		x := start + float64(i)*float64(s.BinNS)/1e9
		j := int(math.Floor(x/d) - i0)
		for len(ss.values) <= j {
			ss.values = append(ss.values, 0)
		}
		ss.values[j] += v
	}
	if perSecond {
		for i := range ss.values {
			ss.values[i] /= d
		}
	}
	return ss
}

func (a axis) rate(t *Trace, name string, s *Series) stepSeries {
	return a.sums(t, name, s, displayBins, true)
}

func (a axis) step(t *Trace, name string, s *Series, _ float64) stepSeries {
	return a.sums(t, name, s, displayBins, false)
}

// values re-bins s onto the display grid, keeping each bin's last value.
func (a axis) values(t *Trace, name string, s *ValueSeries) stepSeries {
	if s.BinNS == 0 {
		return stepSeries{name: name}
	}
	d := a.grid(s.BinNS, displayBins)
	start := a.sec(t, s.StartNS)
	i0 := math.Floor(start / d)
	ss := stepSeries{name: name, startS: i0 * d, binS: d, present: []bool{}}
	for i, v := range s.Values {
		if !s.Has[i] {
			continue
		}
		x := start + float64(i)*float64(s.BinNS)/1e9
		j := int(math.Floor(x/d) - i0)
		for len(ss.values) <= j {
			ss.values = append(ss.values, 0)
			ss.present = append(ss.present, false)
		}
		ss.values[j], ss.present[j] = float64(v), true
	}
	return ss
}

// page collects the sections of the HTML page.
type page struct {
	charts int
	b      strings.Builder
}

func (p *page) chart(svg string) {
	p.charts++
	p.b.WriteString(`<figure>`)
	p.b.WriteString(svg)
	p.b.WriteString(`</figure>`)
}

func (p *page) f(format string, args ...any) { fmt.Fprintf(&p.b, format, args...) }

const css = `body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:980px;padding:0 16px;color:#222;background:#fff}
h1{font-size:22px}h2{font-size:19px;border-bottom:2px solid #ddd;margin-top:32px}h3{font-size:16px;margin-bottom:4px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;font-variant-numeric:tabular-nums}
th{background:#f4f4f4}td.n{text-align:right}figure{margin:8px 0}svg.chart{display:block;max-width:100%;height:auto}
.ct{font-size:13px;font-weight:600}.tk{font-size:10px;fill:#444}.lg{font-size:11px;fill:#222}
.loss{color:#b00;font-weight:600}.note{color:#555}code{background:#f4f4f4;padding:0 3px}
.ok{color:#080}.err{color:#b00}`

// WriteHTML writes the report as one self-contained HTML page: inline CSS
// and SVG charts, no script, no external resource (a Content-Security-Policy
// forbids loading any). Every trace contributes a bounded number of charts
// of at most MaxBins points per line, so the page's size depends on the
// number of traces, endpoints and registers, not on the number of events.
func (r *Report) WriteHTML(w io.Writer, o HTMLOptions) error {
	title := o.Title
	if title == "" {
		title = "iotap report"
	}
	a := r.axis()
	var body page
	bySource := map[string][]*Trace{}
	for _, t := range r.Traces {
		bySource[t.Source] = append(bySource[t.Source], t)
	}
	for _, src := range []struct{ id, name string }{{"usb", "USB"}, {"mmio", "MMIO"}, {"events", "user_events"}, {"pt", "Intel PT"}} {
		ts := bySource[src.id]
		if len(ts) == 0 {
			continue
		}
		var sec page
		for _, t := range ts {
			sec.f(`<article class="trace" id="trace-%d" data-trace="%s"><h3>%s</h3>`, t.index, esc(t.Name), esc(t.Name))
			t.htmlStatus(&sec, a)
			if t.Err == nil {
				switch {
				case t.USB != nil:
					t.htmlUSB(&sec, a, o)
				case t.MMIO != nil:
					t.htmlMMIO(&sec, a)
				case t.Events != nil:
					t.htmlEvents(&sec, a)
				case t.PT != nil:
					t.htmlPT(&sec)
				}
			}
			sec.f(`</article>`)
		}
		body.f(`<section class="source" id="%s" data-charts="%d"><h2>%s</h2>`, src.id, sec.charts, src.name)
		body.b.WriteString(sec.b.String())
		body.f(`</section>`)
		body.charts += sec.charts
	}
	var head page
	head.f(`<h1>%s</h1>`, esc(title))
	r.htmlSummary(&head, a, body.charts)
	if o.Timeline != nil {
		o.Timeline.html(&head)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="iotap report">
<title>%s</title>
<style>%s</style></head>
<body data-charts="%d">
`, esc(title), css, body.charts)
	bw.WriteString(head.b.String())
	bw.WriteString(body.b.String())
	bw.WriteString("\n</body></html>\n")
	return bw.Flush()
}

func (r *Report) htmlSummary(p *page, a axis, charts int) {
	p.f(`<p class="note">%d traces, %d charts. All time charts share one axis (0 to %s): traces aligned by a clocks.json are placed on its common clock, the others start at 0, as in the Perfetto timeline. Red dashed lines mark lost data.</p>`,
		len(r.Traces), charts, fmtSeconds(a.t1))
	p.f(`<table class="traces"><tr><th>source</th><th>format</th><th>trace</th><th>status</th><th>clock</th><th>span</th></tr>`)
	for _, t := range r.Traces {
		st, cls := t.Status(), "ok"
		if t.Err != nil {
			cls = "err"
		} else if t.Loss != "" {
			cls = "loss"
		}
		clock := "starts at 0"
		if t.Aligned {
			clock = "aligned"
		}
		span := "-"
		if t.Span.Set {
			span = fmtSeconds(a.sec(t, t.Span.FirstNS)) + " – " + fmtSeconds(a.sec(t, t.Span.LastNS))
		}
		p.f(`<tr><td>%s</td><td>%s</td><td><a href="#trace-%d">%s</a></td><td class="%s">%s</td><td>%s</td><td>%s</td></tr>`,
			t.Source, esc(t.Format), t.index, esc(t.Name), cls, esc(st), clock, span)
	}
	p.f(`</table>`)
	if len(r.Others) > 0 {
		p.f(`<p class="note">Not traces (%d):</p><ul class="note">`, len(r.Others))
		for _, o := range r.Others {
			p.f(`<li>%s: %s</li>`, esc(o.Name), esc(o.Why))
		}
		p.f(`</ul>`)
	}
}

func (t *Trace) htmlStatus(p *page, a axis) {
	p.f(`<p>%s (%s)`, esc(t.Source), esc(t.Format))
	if t.Aligned {
		p.f(`, aligned by its clocks.json`)
	}
	p.f(`</p>`)
	if t.Err != nil {
		p.f(`<p class="err">not read: %s</p>`, esc(t.Err.Error()))
	}
	if t.Loss != "" {
		p.f(`<p class="loss">data lost: %s</p>`, esc(t.Loss))
	}
}

func (t *Trace) lossMarksS(a axis) []float64 {
	var m []float64
	if t.MMIO != nil {
		for _, ns := range t.MMIO.LostMarksNS {
			m = append(m, a.sec(t, ns))
		}
	}
	if t.USB != nil && t.USB.Loss != "" && t.Span.Set {
		m = append(m, a.sec(t, t.Span.LastNS)) // truncated or dropped: marked at the end
	}
	return m
}

func (t *Trace) htmlUSB(p *page, a axis, o HTMLOptions) {
	u := t.USB
	st := u.Stats
	// Device table.
	p.f(`<table class="devices"><tr><th>device</th><th>identity</th><th>submitted</th><th>completed</th><th>bytes</th><th>errors</th><th>stalls</th><th>cancelled</th></tr>`)
	unknown := 0
	for i, d := range st.Devices() {
		if i == htmlMaxDevices {
			p.f(`<tr><td colspan="8">… %d more devices</td></tr>`, len(st.Devices())-i)
			break
		}
		id := Identity(u.IDs, d.Bus, d.Device)
		if id == "" {
			id = "not captured"
			unknown++
		}
		p.f(`<tr><td>%d:%03d</td><td>%s</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td></tr>`,
			d.Bus, d.Device, esc(id), d.Submissions, d.Completions, d.Bytes, d.Errors+d.SubmitErrors, d.Stalls, d.Cancelled)
	}
	p.f(`</table>`)
	if unknown > 0 {
		p.f(`<p class="note">Identity not captured for %s: %s.</p>`, plural(unknown, "device"), esc(o.Unidentified))
	}
	eps := append([]*USBEndpoint(nil), u.Endpoints...)
	stats := map[*USBEndpoint]int{}
	for i, e := range u.Endpoints {
		stats[e] = i
	}
	all := st.Endpoints()
	// Throughput: the endpoints that moved most bytes.
	sort.SliceStable(eps, func(i, j int) bool { return all[stats[eps[i]]].Bytes > all[stats[eps[j]]].Bytes })
	var lines []stepSeries
	for _, e := range eps {
		if all[stats[e]].Bytes == 0 || len(lines) == htmlMaxLines {
			continue
		}
		lines = append(lines, a.rate(t, e.Name(), &e.Bytes))
	}
	marks := t.lossMarksS(a)
	if len(lines) > 0 {
		p.chart(timeChart("usb-throughput", "throughput per endpoint (bytes/s)", "B/s", a.timeAxis, lines, marks, ""))
	}
	// Errors, stalls, cancellations.
	lines = lines[:0]
	for _, e := range u.Endpoints {
		if e.Errors.Total() > 0 && len(lines) < htmlMaxLines {
			lines = append(lines, a.step(t, e.Name(), &e.Errors, 1))
		}
	}
	if len(lines) > 0 {
		p.chart(dotChart("usb-errors", "errors, stalls and cancellations per endpoint (per bin)", "", a.timeAxis, lines, marks, ""))
	} else {
		p.f(`<p class="note">No errors, stalls or cancellations.</p>`)
	}
	// Latency histograms of the busiest endpoints.
	sort.SliceStable(eps, func(i, j int) bool {
		return all[stats[eps[i]]].Latency.Count() > all[stats[eps[j]]].Latency.Count()
	})
	n := 0
	for _, e := range eps {
		s := all[stats[e]]
		c := s.Latency.Count()
		if c == 0 {
			continue
		}
		if n == htmlMaxLatency {
			p.f(`<p class="note">Latency of %d more endpoints not plotted.</p>`, len(eps)-n)
			break
		}
		n++
		title := fmt.Sprintf("latency %s %s", e.Name(), s.Transfer)
		attrs := fmt.Sprintf(`data-trace="%s" data-bus="%d" data-device="%d" data-endpoint="%d"`, esc(t.Name), e.Bus, e.Device, e.Endpoint)
		p.chart(latencyChart(title, &e.Latency, s.Latency.Quantile(0.5), s.Latency.Quantile(0.99), s.Latency.Max(), c, attrs))
		if c < PrecisionMinCount {
			p.f(`<p class="note">n=%d &lt; %d: p99 is the largest value seen.</p>`, c, PrecisionMinCount)
		}
	}
}

func (t *Trace) htmlMMIO(p *page, a axis) {
	m := t.MMIO
	st := m.Stats
	marks := t.lossMarksS(a)
	var lines []stepSeries
	for _, b := range m.BARs {
		if len(lines) < htmlMaxLines {
			lines = append(lines, a.rate(t, b.Name, &b.Accesses))
		}
	}
	if len(lines) > 0 {
		p.chart(timeChart("mmio-bars", "accesses per BAR (per second)", "/s", a.timeAxis, lines, marks, ""))
	}
	name := func(k mmiotrace.RegKey) string {
		if n := m.Name(k); n != "" {
			return n
		}
		return k.String()
	}
	// Heatmap.
	var rows []heatRow
	for _, r := range m.Regs {
		if len(rows) == htmlMaxHeatRows {
			break
		}
		hs := a.sums(t, "", &r.Accesses, displayBins/2, false)
		rows = append(rows, heatRow{label: name(r.Key), startS: hs.startS, binS: hs.binS, counts: hs.values})
	}
	if len(rows) > 0 {
		p.chart(heatmap("mmio-heatmap", fmt.Sprintf("register accesses over time (top %d of %d registers)", len(rows), len(st.Regs)), a.timeAxis, rows, ""))
	}
	// Hot registers.
	var bars []hbar
	for i, r := range st.Regs {
		if i == htmlMaxHotRegs {
			break
		}
		bars = append(bars, hbar{label: name(r.Key), value: float64(r.Reads + r.Writes), note: fmt.Sprintf(" (R %d, W %d)", r.Reads, r.Writes)})
	}
	if len(bars) > 0 {
		p.chart(barChart("mmio-hot", fmt.Sprintf("hot registers (accesses, top %d of %d)", len(bars), len(st.Regs)), bars, fmt.Sprintf(`data-trace="%s"`, esc(t.Name))))
		p.f(`<table class="regs"><tr><th>register</th><th>name</th><th>width</th><th>reads</th><th>writes</th><th>last value</th><th>polling loops</th></tr>`)
		for i, r := range st.Regs {
			if i == htmlMaxHotRegs {
				break
			}
			p.f(`<tr><td><code>%s</code></td><td>%s</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td><td><code>%#x</code></td><td class="n">%d</td></tr>`,
				esc(r.Key.String()), esc(m.Name(r.Key)), r.Key.Width, r.Reads, r.Writes, r.LastValue, r.PollLoops)
		}
		p.f(`</table>`)
	}
	// Values of the hottest registers.
	for i, r := range m.Regs {
		if i == htmlMaxValueRegs {
			break
		}
		p.chart(timeChart("mmio-values", "value of "+name(r.Key)+" ("+r.Key.String()+")", "", a.timeAxis,
			[]stepSeries{a.values(t, "last value per bin", &r.Values)}, marks, ""))
	}
	if st.LoopCount > 0 {
		p.f(`<p>%d polling loops; longest:</p><ul>`, st.LoopCount)
		for i, l := range st.Loops {
			if i == 5 {
				break
			}
			p.f(`<li>line %d: read %s %d times %s</li>`, l.Line, esc(name(l.Key)), l.Count, esc(l.Describe()))
		}
		p.f(`</ul>`)
	}
}

func (t *Trace) htmlEvents(p *page, a axis) {
	ev := t.Events
	var lines []stepSeries
	for _, e := range ev.ByName {
		if len(lines) < htmlMaxLines {
			lines = append(lines, a.rate(t, fmt.Sprintf("%s (%d)", e.Name, e.Count), &e.Rate))
		}
	}
	if len(lines) > 0 {
		p.chart(timeChart("events-rate", "events per second", "/s", a.timeAxis, lines, nil, ""))
	}
	n := 0
	for _, e := range ev.ByName {
		if len(e.Fields) == 0 || n == htmlMaxEventPlots {
			continue
		}
		n++
		var fl []stepSeries
		for _, f := range e.Fields {
			fl = append(fl, a.values(t, f.Name, &f.Values))
		}
		p.chart(timeChart("events-fields", "fields of "+e.Name, "", a.timeAxis, fl, nil, ""))
	}
}

func (t *Trace) htmlPT(p *page) {
	pt := t.PT
	p.f(`<table class="pt"><tr><th>stream</th><th>bytes</th><th>packets</th><th>PSBs</th><th>overflows</th><th>errors</th><th>skipped bytes</th><th>truncated</th><th>TSC span</th></tr>`)
	for _, s := range pt.Streams {
		span := "-"
		if s.Stats.HaveTime {
			span = fmt.Sprintf("%d ticks", s.Stats.LastTSC-s.Stats.FirstTSC)
		}
		p.f(`<tr><td>%s</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td><td>%v</td><td>%s</td></tr>`,
			esc(s.Name), s.Stats.Bytes, s.Stats.Packets, s.Stats.PSBs, s.Stats.Overflows, s.Stats.Errors, s.Stats.SkippedBytes, s.Stats.Truncated, span)
	}
	p.f(`</table>`)
	for _, s := range pt.Streams {
		var bars []hbar
		for _, k := range intelpt.Kinds() {
			if n := s.Stats.Count(k); n > 0 {
				bars = append(bars, hbar{label: k.String(), value: float64(n)})
			}
		}
		sort.SliceStable(bars, func(i, j int) bool { return bars[i].value > bars[j].value })
		if len(bars) > 0 {
			p.chart(barChart("pt-packets", "packets by kind: "+s.Name, bars, ""))
		}
	}
	if pt.CallErr != nil {
		p.f(`<p class="err">calls not analysed: %s</p>`, esc(pt.CallErr.Error()))
	}
	if pt.CallTree != nil {
		st := pt.CallStats
		p.f(`<p>Calls (as <code>iotap pt calls</code> finds them): %d instructions, %d calls, %d tail calls, %d returns, %d unwinds.</p>`,
			st.Insns, st.Calls, st.TailCalls, st.Returns, st.Unwinds)
		for _, n := range pt.CallNotes {
			p.f(`<p class="note">%s</p>`, esc(n))
		}
		unit := "ticks"
		if len(pt.Calls) > 0 {
			unit = pt.Calls[0].Unit
		}
		p.chart(flameGraph("pt-flame", "flame graph of the calls", pt.CallTree, unit, `data-trace="`+esc(t.Name)+`"`))
	}
	if len(pt.Calls) > 0 {
		p.f(`<table class="pt-functions" data-trace="%s"><tr><th>function</th><th>calls</th><th>self instructions</th><th>incl. instructions</th><th>self time</th><th>incl. time</th></tr>`, esc(t.Name))
		var bars []hbar
		for i, f := range pt.Calls {
			if i == htmlMaxHotRegs {
				break
			}
			p.f(`<tr data-function="%s"><td>%s</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td><td class="n">%s</td><td class="n">%s</td></tr>`,
				esc(f.Name), esc(f.Name), f.Calls, f.SelfInsns, f.InclInsns, fmtUnit(uint64(f.Self), f.Unit), fmtUnit(uint64(f.Total), f.Unit))
			if f.Self > 0 {
				bars = append(bars, hbar{label: f.Name, value: float64(f.Self), note: " " + f.Unit})
			}
		}
		p.f(`</table>`)
		if len(bars) > 0 {
			sort.SliceStable(bars, func(i, j int) bool { return bars[i].value > bars[j].value })
			p.chart(barChart("pt-functions", "self time per function (the functions above)", bars, `data-trace="`+esc(t.Name)+`"`))
		}
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
