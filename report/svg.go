package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/iotap/iotap/intelpt/calls"
)

// Chart geometry (SVG user units = CSS pixels).
const (
	chartW   = 900
	padLeft  = 70
	padRight = 160 // legend
	padTop   = 24
	padBot   = 34
	plotW    = chartW - padLeft - padRight
)

var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

func color(i int) string { return palette[i%len(palette)] }

// svgBuf accumulates one chart.
type svgBuf struct {
	strings.Builder
}

func (b *svgBuf) f(format string, args ...any) { fmt.Fprintf(b, format, args...) }

func esc(s string) string { return html.EscapeString(s) }

// num formats a coordinate with two decimals at most.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// timeAxis maps seconds on the report's shared axis to x pixels.
type timeAxis struct {
	t0, t1 float64 // seconds
}

func (a timeAxis) x(sec float64) float64 {
	if a.t1 <= a.t0 {
		return padLeft
	}
	return padLeft + (sec-a.t0)/(a.t1-a.t0)*plotW
}

// niceStep returns a 1-2-5 step giving about n ticks over span.
func niceStep(span float64, n int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func fmtSeconds(s float64) string {
	switch {
	case s == 0:
		return "0"
	case math.Abs(s) < 1e-3:
		return strconv.FormatFloat(s*1e6, 'g', 4, 64) + "µs"
	case math.Abs(s) < 1:
		return strconv.FormatFloat(s*1e3, 'g', 4, 64) + "ms"
	}
	return strconv.FormatFloat(s, 'g', 5, 64) + "s"
}

// fmtSI formats v with an SI prefix and unit ("1.5 kB/s").
func fmtSI(v float64, unit string) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'g', 3, 64) + "G" + unit
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M" + unit
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k" + unit
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + unit
}

// open starts a chart: the svg element with its data attributes, the
// title and the x (time) axis with ticks.
func (b *svgBuf) open(kind, title string, h int, attrs string) {
	b.f(`<svg class="chart" data-kind="%s" %s width="%d" height="%d" viewBox="0 0 %d %d" role="img" xmlns="http://www.w3.org/2000/svg">`,
		kind, attrs, chartW, h, chartW, h)
	b.f(`<title>%s</title>`, esc(title))
	b.f(`<rect class="bg" x="0" y="0" width="%d" height="%d" fill="#fff"/>`, chartW, h)
	b.f(`<text x="%d" y="16" class="ct">%s</text>`, padLeft, esc(title))
}

func (b *svgBuf) timeTicks(a timeAxis, h int) {
	y0 := float64(h - padBot)
	b.f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#333"/>`, padLeft, num(y0), padLeft+plotW, num(y0))
	step := niceStep(a.t1-a.t0, 8)
	for t := math.Ceil(a.t0/step) * step; t <= a.t1+step*1e-9; t += step {
		x := a.x(t)
		b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333"/>`, num(x), num(y0), num(x), num(y0+4))
		b.f(`<text x="%s" y="%s" text-anchor="middle" class="tk">%s</text>`, num(x), num(y0+16), fmtSeconds(t))
	}
	b.f(`<text x="%d" y="%d" text-anchor="end" class="tk">time</text>`, padLeft+plotW, h-2)
}

// yTicks draws a linear y axis from 0 to ymax over [top, bottom].
func (b *svgBuf) yTicks(ymax float64, top, bottom float64, unit string) {
	b.f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#333"/>`, padLeft, num(top), padLeft, num(bottom))
	step := niceStep(ymax, 4)
	for v := 0.0; v <= ymax*(1+1e-9); v += step {
		y := bottom - v/ymax*(bottom-top)
		b.f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#eee"/>`, padLeft, num(y), padLeft+plotW, num(y))
		b.f(`<text x="%d" y="%s" text-anchor="end" class="tk">%s</text>`, padLeft-4, num(y+4), esc(fmtSI(v, unit)))
	}
}

func (b *svgBuf) legend(i int, name string, y float64) {
	b.legendColor(color(i), name, y)
}

func (b *svgBuf) legendColor(c, name string, y float64) {
	x := padLeft + plotW + 10
	b.f(`<rect x="%d" y="%s" width="10" height="10" fill="%s"/>`, x, num(y-9), c)
	b.f(`<text x="%d" y="%s" class="lg">%s</text>`, x+14, num(y), esc(name))
}

// lossMarks draws loss as red dashed vertical lines.
func (b *svgBuf) lossMarks(a timeAxis, marks []float64, top, bottom float64) {
	for _, s := range marks {
		x := a.x(s)
		b.f(`<line class="loss" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#d00" stroke-dasharray="4 3" stroke-width="1.5"><title>data lost here</title></line>`,
			num(x), num(top), num(x), num(bottom))
	}
}

// stepSeries is one line of a time chart: y values over bins.
type stepSeries struct {
	name    string
	startS  float64 // seconds on the shared axis of bin 0's start
	binS    float64 // bin width, seconds
	values  []float64
	present []bool // nil: every bin has a value
}

func (s *stepSeries) max() float64 {
	m := 0.0
	for i, v := range s.values {
		if (s.present == nil || s.present[i]) && v > m {
			m = v
		}
	}
	return m
}

// timeChart draws step lines over the shared time axis.
func timeChart(kind, title, unit string, a timeAxis, series []stepSeries, marks []float64, attrs string) string {
	const h = 220
	var b svgBuf
	b.open(kind, title, h, attrs)
	top, bottom := float64(padTop+6), float64(h-padBot)
	ymax := 0.0
	for i := range series {
		ymax = max(ymax, series[i].max())
	}
	if ymax == 0 {
		ymax = 1
	}
	ymax *= 1.05
	b.yTicks(ymax, top, bottom, unit)
	b.timeTicks(a, h)
	y := func(v float64) float64 { return bottom - v/ymax*(bottom-top) }
	for i, s := range series {
		var pts []string
		flush := func() {
			if len(pts) > 0 {
				b.f(`<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, color(i), strings.Join(pts, " "))
				pts = pts[:0]
			}
		}
		for j, v := range s.values {
			if s.present != nil && !s.present[j] {
				continue
			}
			x0 := a.x(s.startS + float64(j)*s.binS)
			x1 := a.x(s.startS + float64(j+1)*s.binS)
			if s.present != nil && len(pts) > 0 && j > 0 && !s.present[j-1] {
				// Values hold until the next sample: keep the step.
			}
			pts = append(pts, num(x0)+","+num(y(v)), num(x1)+","+num(y(v)))
		}
		flush()
		if i < 10 {
			b.legend(i, s.name, float64(padTop+14+i*16))
		}
	}
	if len(series) > 10 {
		b.f(`<text x="%d" y="%d" class="lg">+%d more</text>`, padLeft+plotW+10, padTop+14+10*16, len(series)-10)
	}
	b.lossMarks(a, marks, top, bottom)
	b.WriteString(`</svg>`)
	return b.String()
}

// latencyChart draws a log-scale latency histogram with its percentiles.
func latencyChart(title string, h *LogHist, p50, p99, maxUS int64, n uint64, attrs string) string {
	const ht = 200
	var b svgBuf
	b.open("latency", title, ht, attrs)
	top, bottom := float64(padTop+6), float64(ht-padBot)
	// x: log10 of microseconds, from 1 µs (bin 0 drawn from 0.1) to the
	// decade above the largest bin.
	lo, hi := -1.0, math.Ceil(float64(len(h.Counts))/LogBinsPerDecade)
	if hi < 2 {
		hi = 2
	}
	x := func(us float64) float64 {
		l := lo
		if us > 0 {
			l = math.Max(lo, math.Log10(us))
		}
		return padLeft + (l-lo)/(hi-lo)*plotW
	}
	var cmax uint64 = 1
	for _, c := range h.Counts {
		cmax = max(cmax, c)
	}
	b.f(`<g class="axis" data-log10-min="%s" data-log10-max="%s" data-x0="%d" data-x1="%d"></g>`, num(lo), num(hi), padLeft, padLeft+plotW)
	b.yTicks(float64(cmax)*1.05, top, bottom, "")
	b.f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#333"/>`, padLeft, num(bottom), padLeft+plotW, num(bottom))
	for d := int(lo) + 1; d <= int(hi); d++ {
		xx := x(math.Pow(10, float64(d)))
		b.f(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333"/>`, num(xx), num(bottom), num(xx), num(bottom+4))
		b.f(`<text x="%s" y="%s" text-anchor="middle" class="tk">%s</text>`, num(xx), num(bottom+16), fmtSeconds(math.Pow(10, float64(d))/1e6))
	}
	b.f(`<text x="%d" y="%d" text-anchor="end" class="tk">latency (log scale)</text>`, padLeft+plotW, ht-2)
	ymax := float64(cmax) * 1.05
	for i, c := range h.Counts {
		if c == 0 {
			continue
		}
		x0 := x(math.Max(LogBinLow(i), 0.1))
		if i == 0 {
			x0 = x(0.1)
		}
		x1 := x(LogBinLow(i + 1))
		hgt := float64(c) / ymax * (bottom - top)
		b.f(`<rect class="bin" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s – %s: %d</title></rect>`,
			num(x0), num(bottom-hgt), num(math.Max(x1-x0-1, 1)), num(hgt), color(0),
			fmtSeconds(LogBinLow(i)/1e6), fmtSeconds(LogBinLow(i+1)/1e6), c)
	}
	for i, p := range []struct {
		name string
		us   int64
	}{{"p50", p50}, {"p99", p99}, {"max", maxUS}} {
		xx := x(float64(p.us))
		c := []string{"#2ca02c", "#d62728", "#555"}[i]
		b.f(`<line class="pct" data-pct="%s" data-us="%d" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"/>`,
			p.name, p.us, num(xx), num(top), num(xx), num(bottom), c)
		label := p.name + " " + FmtLatency(p.us)
		if p.name == "max" {
			label = p.name + " " + FmtMicros(p.us)
		}
		b.legendColor(c, label, float64(padTop+14+i*16))
	}
	b.f(`<text x="%d" y="%d" class="lg">n = %d</text>`, padLeft+plotW+10, padTop+14+3*16, n)
	b.WriteString(`</svg>`)
	return b.String()
}

// hbar is one bar of a horizontal bar chart.
type hbar struct {
	label string
	value float64
	note  string
}

// barChart draws horizontal bars (hot registers).
func barChart(kind, title string, bars []hbar, attrs string) string {
	h := padTop + 16 + len(bars)*18 + 10
	var b svgBuf
	b.open(kind, title, h, attrs)
	vmax := 0.0
	for _, x := range bars {
		vmax = max(vmax, x.value)
	}
	if vmax == 0 {
		vmax = 1
	}
	const labelW = 230
	w := float64(chartW - labelW - 180)
	b.f(`<g class="axis" data-x0="%d" data-w="%s" data-vmax="%s"></g>`, labelW, num(w), num(vmax))
	for i, x := range bars {
		y := float64(padTop + 10 + i*18)
		b.f(`<text x="%d" y="%s" text-anchor="end" class="lg">%s</text>`, labelW-6, num(y+11), esc(x.label))
		bw := x.value / vmax * w
		b.f(`<rect class="bar" data-label="%s" data-value="%s" x="%d" y="%s" width="%s" height="14" fill="%s"><title>%s: %s</title></rect>`,
			esc(x.label), num(x.value), labelW, num(y), num(bw), color(i), esc(x.label), num(x.value))
		b.f(`<text x="%s" y="%s" class="lg">%s%s</text>`, num(float64(labelW)+bw+4), num(y+11), num(x.value), esc(x.note))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// heatRow is one row of a heatmap: counts per time bin.
type heatRow struct {
	label  string
	startS float64
	binS   float64
	counts []float64
}

// heatmap draws rows × time cells shaded by log(count).
func heatmap(kind, title string, a timeAxis, rows []heatRow, attrs string) string {
	const rowH = 12
	h := padTop + 10 + len(rows)*rowH + padBot
	var b svgBuf
	b.open(kind, title, h, attrs)
	cmax := 1.0
	for _, r := range rows {
		for _, c := range r.counts {
			cmax = max(cmax, c)
		}
	}
	lmax := math.Log1p(cmax)
	for i, r := range rows {
		y := float64(padTop + 6 + i*rowH)
		b.f(`<text x="%d" y="%s" text-anchor="end" class="tk">%s</text>`, padLeft-4, num(y+rowH-2), esc(r.label))
		for j, c := range r.counts {
			if c == 0 {
				continue
			}
			x0 := a.x(r.startS + float64(j)*r.binS)
			x1 := a.x(r.startS + float64(j+1)*r.binS)
			op := 0.15 + 0.85*math.Log1p(c)/lmax
			b.f(`<rect x="%s" y="%s" width="%s" height="%d" fill="#b2182b" fill-opacity="%s"><title>%s @ %s: %s</title></rect>`,
				num(x0), num(y), num(math.Max(x1-x0, 0.5)), rowH-1, num(op), esc(r.label), fmtSeconds(r.startS+float64(j)*r.binS), num(c))
		}
	}
	b.timeTicks(a, h)
	b.f(`<text x="%d" y="%d" class="lg">darker: more accesses</text>`, padLeft+plotW+10, padTop+14)
	b.f(`<text x="%d" y="%d" class="lg">(max %s per bin)</text>`, padLeft+plotW+10, padTop+30, num(cmax))
	b.WriteString(`</svg>`)
	return b.String()
}

// dotChart draws counts over the shared time axis as dots (one per
// non-empty bin, its height the count): sparse events stay visible.
func dotChart(kind, title, unit string, a timeAxis, series []stepSeries, marks []float64, attrs string) string {
	const h = 200
	var b svgBuf
	b.open(kind, title, h, attrs)
	top, bottom := float64(padTop+6), float64(h-padBot)
	ymax := 0.0
	for i := range series {
		ymax = max(ymax, series[i].max())
	}
	if ymax == 0 {
		ymax = 1
	}
	ymax *= 1.1
	b.yTicks(ymax, top, bottom, unit)
	b.timeTicks(a, h)
	for i, s := range series {
		for j, v := range s.values {
			if v == 0 {
				continue
			}
			x := a.x(s.startS + (float64(j)+0.5)*s.binS)
			y := bottom - v/ymax*(bottom-top)
			b.f(`<circle cx="%s" cy="%s" r="4" fill="%s"><title>%s: %s</title></circle>`, num(x), num(y), color(i), esc(s.name), num(v))
		}
		if i < 10 {
			b.legend(i, s.name, float64(padTop+14+i*16))
		}
	}
	b.lossMarks(a, marks, top, bottom)
	b.WriteString(`</svg>`)
	return b.String()
}

// Flame graph geometry: frames narrower than flameMinPx and deeper than
// flameMaxDepth rows are not drawn (the page stays bounded).
const (
	flameRowH     = 16
	flameX0       = 10
	flameW        = chartW - 2*flameX0
	flameMinPx    = 1.0
	flameMaxDepth = 48
)

// flameFrame is one drawn frame of a flame graph.
type flameFrame struct {
	name, stack        string
	depth              int
	x, w               float64
	calls              int
	incl, self         uint64 // instructions
	inclTime, selfTime uint64
}

// foldedName is a frame's name as `iotap pt calls --folded` writes it.
func foldedName(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, ";", ":"), " ", "_")
}

// flameGraph draws a call tree (calls.Node: the threads are the root's
// children) as a flame graph: the threads at the bottom, each function
// above its caller, as wide as its inclusive instructions (the sum of
// the --folded weights of its stacks, so that the picture is that of
// flamegraph.pl over `iotap pt calls --folded`). Each frame's title
// gives its calls, instructions and time (in unit).
func flameGraph(kind, title string, root *calls.Node, unit, attrs string) string {
	// weight: self instructions of the subtree, as --folded counts them
	weight := map[*calls.Node]uint64{}
	var sum func(n *calls.Node, top bool) uint64
	sum = func(n *calls.Node, top bool) uint64 {
		if n.Count == 0 && !top {
			return 0
		}
		w := n.SelfInsn
		for _, c := range n.Children {
			w += sum(c, false)
		}
		weight[n] = w
		return w
	}
	var total uint64
	for _, th := range root.Children {
		total += sum(th, true)
	}
	var frames []flameFrame
	maxDepth := 0
	var walk func(n *calls.Node, stack string, depth int, x float64)
	walk = func(n *calls.Node, stack string, depth int, x float64) {
		w := float64(weight[n]) / float64(total) * flameW
		if w < flameMinPx || depth >= flameMaxDepth {
			return
		}
		if stack != "" {
			stack += ";"
		}
		stack += foldedName(n.Name)
		frames = append(frames, flameFrame{name: n.Name, stack: stack, depth: depth, x: x, w: w, calls: n.Count,
			incl: weight[n], self: n.SelfInsn, inclTime: n.InclTime, selfTime: n.SelfTime})
		maxDepth = max(maxDepth, depth)
		for _, c := range n.Children {
			walk(c, stack, depth+1, x)
			x += float64(weight[c]) / float64(total) * flameW
		}
	}
	if total > 0 {
		x := float64(flameX0)
		for _, th := range root.Children {
			walk(th, "", 0, x)
			x += float64(weight[th]) / float64(total) * flameW
		}
	}
	h := padTop + 10 + (maxDepth+1)*flameRowH + 16
	var b svgBuf
	b.open(kind, title, h, attrs)
	b.f(`<g class="axis" data-x0="%d" data-w="%d" data-total="%d"></g>`, flameX0, flameW, total)
	bottom := float64(h - 16)
	for _, f := range frames {
		y := bottom - float64(f.depth+1)*flameRowH
		pct := 100 * float64(f.incl) / float64(total)
		tip := fmt.Sprintf("%s: %d instructions (%.2f%%), self %d", f.name, f.incl, pct, f.self)
		if f.depth > 0 {
			tip = fmt.Sprintf("%s, %d calls", tip, f.calls)
		}
		tip += "; time " + fmtUnit(f.inclTime, unit) + ", self " + fmtUnit(f.selfTime, unit)
		b.f(`<g class="frame" data-stack="%s" data-incl="%d" data-self="%d" data-calls="%d"><rect x="%s" y="%s" width="%s" height="%d" fill="%s" stroke="#fff" stroke-width="0.5"/><title>%s</title>`,
			esc(f.stack), f.incl, f.self, f.calls, num(f.x), num(y), num(f.w), flameRowH-1, flameColor(f.name, f.depth), esc(tip))
		if chars := int((f.w - 4) / 6.5); chars >= 3 {
			label := f.name
			if len([]rune(label)) > chars {
				label = string([]rune(label)[:chars-1]) + "…"
			}
			b.f(`<text x="%s" y="%s" class="lg">%s</text>`, num(f.x+2), num(y+11), esc(label))
		}
		b.WriteString(`</g>`)
	}
	b.f(`<text x="%d" y="%d" class="tk">width: instructions (as iotap pt calls --folded weighs them); %d frames narrower than %gpx or deeper than %d not drawn</text>`,
		flameX0, h-3, countHidden(root, weight, total), flameMinPx, flameMaxDepth)
	b.WriteString(`</svg>`)
	return b.String()
}

// countHidden counts the call paths (with calls) that the flame graph
// leaves out.
func countHidden(root *calls.Node, weight map[*calls.Node]uint64, total uint64) int {
	n := 0
	var walk func(x *calls.Node, depth int, top bool)
	walk = func(x *calls.Node, depth int, top bool) {
		if x.Count == 0 && !top {
			return
		}
		if total == 0 || float64(weight[x])/float64(total)*flameW < flameMinPx || depth >= flameMaxDepth {
			n++
		}
		for _, c := range x.Children {
			walk(c, depth+1, false)
		}
	}
	for _, th := range root.Children {
		walk(th, 0, true)
	}
	return n
}

// flameColor is a warm colour chosen by the function's name (threads
// grey), as flame graphs are drawn.
func flameColor(name string, depth int) string {
	if depth == 0 {
		return "#b8b8b8"
	}
	var h uint32 = 2166136261
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * 16777619
	}
	r := 205 + h%50
	g := 80 + (h>>8)%130
	bl := 30 + (h>>16)%40
	return fmt.Sprintf("#%02x%02x%02x", r, g, bl)
}

// fmtUnit formats a time of the call tree (ns or TSC ticks).
func fmtUnit(v uint64, unit string) string {
	if unit == "ns" {
		return time.Duration(v).String()
	}
	return strconv.FormatUint(v, 10) + " ticks"
}
