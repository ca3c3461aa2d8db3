//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// ptDomJS extracts the PT section of a report page: its box, the flame
// graph's frames and axis, and the time-per-function table.
const ptDomJS = `(() => {
  const box = e => { const b = e.getBoundingClientRect(); return {x: b.left + scrollX, y: b.top + scrollY, w: b.width, h: b.height}; };
  const sec = document.querySelector('section#pt');
  const fg = sec && sec.querySelector('svg.chart[data-kind=pt-flame]');
  const ax = fg && fg.querySelector('g.axis');
  return {
    height: document.documentElement.scrollHeight,
    section: sec ? box(sec) : null,
    flame: fg ? box(fg) : null,
    x0: ax ? +ax.dataset.x0 : 0, w: ax ? +ax.dataset.w : 0, total: ax ? +ax.dataset.total : 0,
    frames: fg ? [...fg.querySelectorAll('g.frame')].map(g => { const r = g.querySelector('rect');
      return {stack: g.dataset.stack, incl: +g.dataset.incl, self: +g.dataset.self, calls: +g.dataset.calls,
        x: +r.getAttribute('x'), w: +r.getAttribute('width')}; }) : [],
    functions: sec ? [...sec.querySelectorAll('table.pt-functions tr[data-function]')].map(r =>
      ({name: r.dataset.function, cells: [...r.querySelectorAll('td')].map(c => c.textContent)})) : [],
  };
})()`

// TestReportPTInChromium: the report of a perf.data of Intel PT (the
// synthesized trace of the calls test program, a real run) opened in
// headless Chromium from disk: no console error, no network request, a
// non-blank screenshot of the PT section and of its flame graph, and the
// plotted numbers are those of iotap pt calls: every frame of the flame
// graph is the sum of the --folded lines of its stack (its width that sum
// over the total, ±0.5 px), the frames drawn are exactly the stacks of
// --folded at least 1 px wide, and the time-per-function table's calls
// and self instructions are the count and the sum of self_insns of
// pt calls --json's objects of each function.
func TestReportPTInChromium(t *testing.T) {
	if testing.Short() && os.Getenv("IOTAP_BROWSER") == "" {
		t.Skip("browser test: not with -short (set IOTAP_BROWSER=1 to run it)")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (apt-get install chromium; .ci/run installs it)")
	}
	perf := synthPerfData(t)
	page := filepath.Join(t.TempDir(), "report.html")
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"report", perf, "-o", page}, &out, &errb); err != nil {
		t.Fatalf("report: %v\n%s", err, errb.String())
	}
	folded, stderr, code := runUSB(t, "pt", "calls", "--folded", perf)
	if code != 0 {
		t.Fatalf("pt calls --folded: exit %d: %s", code, stderr)
	}
	jsonOut, stderr, code := runUSB(t, "pt", "calls", "--json", perf)
	if code != 0 {
		t.Fatalf("pt calls --json: exit %d: %s", code, stderr)
	}

	ctx, b, s, checkBrowser := openInChromium(t, chromium, page)
	defer checkBrowser()
	var ev struct {
		Result struct {
			Value struct {
				Height         float64
				Section, Flame *domBox
				X0, W, Total   float64
				Frames         []struct {
					Stack             string
					Incl, Self, Calls float64
					X, W              float64
				}
				Functions []struct {
					Name  string
					Cells []string
				}
			}
		}
	}
	if err := b.Call(ctx, s, "Runtime.evaluate", map[string]any{"expression": ptDomJS, "returnByValue": true}, &ev); err != nil {
		t.Fatal(err)
	}
	dom := ev.Result.Value
	if dom.Section == nil || dom.Flame == nil {
		t.Fatalf("no PT section or no flame graph: %+v", dom)
	}
	full := screenshot(t, ctx, b, s, domBox{0, 0, 1000, dom.Height})
	cut := func(bx domBox) image.Image {
		r := image.Rect(int(bx.X), int(bx.Y), int(math.Ceil(bx.X+bx.W)), int(math.Ceil(bx.Y+bx.H))).Intersect(full.Bounds())
		return full.(interface {
			SubImage(image.Rectangle) image.Image
		}).SubImage(r)
	}
	if blank(cut(*dom.Section)) || blank(cut(*dom.Flame)) {
		t.Errorf("PT section or flame graph screenshot is blank")
	}

	// The oracle: pt calls --folded, summed per stack prefix.
	weight := map[string]float64{} // self weight per stack
	agg := map[string]float64{}    // inclusive: the stack and those above it
	total := 0.0
	for _, l := range strings.Split(strings.TrimSpace(folded), "\n") {
		i := strings.LastIndexByte(l, ' ')
		w, err := strconv.ParseFloat(l[i+1:], 64)
		if i < 0 || err != nil {
			t.Fatalf("--folded line %q", l)
		}
		stack := l[:i]
		weight[stack] += w
		total += w
		for p := stack; ; {
			agg[p] += w
			j := strings.LastIndexByte(p, ';')
			if j < 0 {
				break
			}
			p = p[:j]
		}
	}
	if dom.Total != total || total == 0 {
		t.Fatalf("flame graph total %v, --folded sums to %v", dom.Total, total)
	}
	drawn := map[string]bool{}
	for _, f := range dom.Frames {
		drawn[f.Stack] = true
		if f.Incl != agg[f.Stack] || f.Self != weight[f.Stack] {
			t.Errorf("frame %s: %v instructions, self %v; --folded: %v, self %v", f.Stack, f.Incl, f.Self, agg[f.Stack], weight[f.Stack])
		}
		if want := agg[f.Stack] / total * dom.W; math.Abs(f.W-want) > 0.5 {
			t.Errorf("frame %s: width %v, --folded's share is %v px", f.Stack, f.W, want)
		}
	}
	for p, w := range agg {
		if w/total*dom.W >= 1 && strings.Count(p, ";") < 48 && !drawn[p] {
			t.Errorf("stack %s (%v of %v instructions) not drawn", p, w, total)
		}
	}
	if len(dom.Frames) < 50 {
		t.Errorf("only %d frames", len(dom.Frames))
	}

	// The table: calls and self instructions per function, from --json.
	type fn struct{ calls, self uint64 }
	byFunc := map[string]*fn{}
	for _, l := range strings.Split(strings.TrimSpace(jsonOut), "\n") {
		var c struct {
			Kind      string `json:"kind"`
			Function  string `json:"func"`
			SelfInsns uint64 `json:"self_insns"`
		}
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("--json line %q: %v", l, err)
		}
		if c.Kind != "pt_call" {
			continue // the input record
		}
		f := byFunc[c.Function]
		if f == nil {
			f = &fn{}
			byFunc[c.Function] = f
		}
		f.calls++
		f.self += c.SelfInsns
	}
	if len(dom.Functions) < 10 {
		t.Fatalf("%d rows in the function table", len(dom.Functions))
	}
	for _, r := range dom.Functions {
		w := byFunc[r.Name]
		if w == nil || len(r.Cells) < 3 {
			t.Errorf("function %s: row %v, not in --json", r.Name, r.Cells)
			continue
		}
		if r.Cells[1] != strconv.FormatUint(w.calls, 10) || r.Cells[2] != strconv.FormatUint(w.self, 10) {
			t.Errorf("function %s: %s calls, %s self instructions; --json: %d calls, %d", r.Name, r.Cells[1], r.Cells[2], w.calls, w.self)
		}
	}
	if byFunc["fib"] == nil || byFunc["fib"].calls != 177 {
		t.Errorf("fib: %+v, want 177 calls", byFunc["fib"])
	}

	// IOTAP_UPDATE_SCREENSHOT=1 rewrites the picture in docs/report.md.
	if os.Getenv("IOTAP_UPDATE_SCREENSHOT") != "" {
		sec := *dom.Section
		img := screenshotPNG(t, ctx, b, s, domBox{sec.X, sec.Y, sec.W, min(sec.H, 1500)})
		if err := os.WriteFile("../../docs/report-pt.png", img, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
