package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iotap/iotap/internal/cdp"
)

// domJS extracts what the test checks from the report page: chart counts,
// boxes to screenshot, and the numbers the charts plot.
const domJS = `(() => {
  const box = e => { const b = e.getBoundingClientRect(); return {x: b.left + scrollX, y: b.top + scrollY, w: b.width, h: b.height}; };
  return {
    charts: +document.body.dataset.charts,
    height: document.documentElement.scrollHeight,
    sections: [...document.querySelectorAll('section.source')].map(s => ({id: s.id, charts: +s.dataset.charts, svgs: s.querySelectorAll('svg.chart').length, box: box(s)})),
    svgs: [...document.querySelectorAll('svg.chart')].map(s => ({kind: s.dataset.kind, box: box(s)})),
    latency: [...document.querySelectorAll('svg.chart[data-kind=latency]')].map(s => {
      const ax = s.querySelector('g.axis');
      return {trace: s.dataset.trace, bus: +s.dataset.bus, device: +s.dataset.device, endpoint: +s.dataset.endpoint,
        lo: +ax.dataset.log10Min, hi: +ax.dataset.log10Max, x0: +ax.dataset.x0, x1: +ax.dataset.x1,
        pct: [...s.querySelectorAll('line.pct')].map(l => ({name: l.dataset.pct, x: +l.getAttribute('x1')})),
        legend: [...s.querySelectorAll('text.lg')].map(t => t.textContent),
        bins: [...s.querySelectorAll('rect.bin title')].map(t => +t.textContent.split(': ').pop())};
    }),
    hot: [...document.querySelectorAll('svg.chart[data-kind=mmio-hot]')].map(s => {
      const ax = s.querySelector('g.axis');
      return {trace: s.dataset.trace, x0: +ax.dataset.x0, w: +ax.dataset.w,
        bars: [...s.querySelectorAll('rect.bar')].map(b => ({label: b.dataset.label, width: +b.getAttribute('width'), x: +b.getAttribute('x')})),
        labels: [...s.querySelectorAll('text.lg')].map(t => t.textContent)};
    }),
  };
})()`

type domBox struct{ X, Y, W, H float64 }

type domInfo struct {
	Charts   int
	Height   float64
	Sections []struct {
		ID     string
		Charts int
		Svgs   int
		Box    domBox
	}
	Svgs []struct {
		Kind string
		Box  domBox
	}
	Latency []struct {
		Trace                 string
		Bus, Device, Endpoint int
		Lo, Hi, X0, X1        float64
		Pct                   []struct {
			Name string
			X    float64
		}
		Legend []string
		Bins   []float64
	}
	Hot []struct {
		Trace string
		X0, W float64
		Bars  []struct {
			Label string
			Width float64
			X     float64
		}
		Labels []string
	}
}

// The HTML report of the bundled testdata, opened from disk by a headless
// Chromium: no console error, no network request, every chart drawn (a
// screenshot of each is not blank, and their number is the page's own
// chart count), and the numbers the charts plot are those of report --json.
func TestReportHTMLInChromium(t *testing.T) {
	if testing.Short() && os.Getenv("IOTAP_BROWSER") == "" {
		// Runs in the full suite (CI installs chromium); -short skips it
		// unless IOTAP_BROWSER is set.
		t.Skip("browser test: not with -short (set IOTAP_BROWSER=1 to run it)")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (apt-get install chromium; .ci/run installs it)")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"report", "../../testdata", "-o", page}, &out, &errb); err != nil {
		t.Fatalf("report: %v\n%s", err, errb.String())
	}
	var js bytes.Buffer
	if err := run(context.Background(), []string{"report", "--json", "../../testdata"}, &js, &errb); err != nil {
		t.Fatalf("report --json: %v", err)
	}
	want := parseReportJSON(t, js.Bytes())

	ctx, b, s, checkBrowser := openInChromium(t, chromium, page)
	defer checkBrowser()
	var ev struct {
		Result struct{ Value domInfo }
	}
	if err := b.Call(ctx, s, "Runtime.evaluate", map[string]any{"expression": domJS, "returnByValue": true}, &ev); err != nil {
		t.Fatal(err)
	}
	dom := ev.Result.Value

	// One screenshot of the whole page; sections and charts are cut out
	// of it.
	full := screenshot(t, ctx, b, s, domBox{0, 0, 1000, dom.Height})
	cut := func(bx domBox) image.Image {
		r := image.Rect(int(bx.X), int(bx.Y), int(math.Ceil(bx.X+bx.W)), int(math.Ceil(bx.Y+bx.H))).Intersect(full.Bounds())
		return full.(interface {
			SubImage(image.Rectangle) image.Image
		}).SubImage(r)
	}
	// Chart counts: the page's own, its sections', the SVGs present.
	if dom.Charts == 0 || dom.Charts != len(dom.Svgs) {
		t.Errorf("page says %d charts, has %d", dom.Charts, len(dom.Svgs))
	}
	sum := 0
	for _, sec := range dom.Sections {
		sum += sec.Charts
		if sec.Charts != sec.Svgs {
			t.Errorf("section %s says %d charts, has %d", sec.ID, sec.Charts, sec.Svgs)
		}
		if blank(cut(sec.Box)) {
			t.Errorf("section %s: screenshot is blank", sec.ID)
		}
	}
	if sum != dom.Charts {
		t.Errorf("sections hold %d charts, page says %d", sum, dom.Charts)
	}
	for _, id := range []string{"usb", "mmio", "events"} {
		if !strings.Contains(fmt.Sprint(dom.Sections), id) {
			t.Errorf("no %s section", id)
		}
	}
	drawn := 0
	for i, c := range dom.Svgs {
		if c.Box.W < 100 || c.Box.H < 50 {
			t.Errorf("chart %d (%s) laid out %vx%v", i, c.Kind, c.Box.W, c.Box.H)
			continue
		}
		if blank(cut(c.Box)) {
			t.Errorf("chart %d (%s): screenshot is blank", i, c.Kind)
			continue
		}
		drawn++
	}
	if drawn != dom.Charts {
		t.Errorf("%d of the page's %d charts drawn", drawn, dom.Charts)
	}

	// Latency histograms: percentile markers at the place of report
	// --json's percentiles on the log axis, labelled with their value, and
	// bins that hold every paired transfer.
	if len(dom.Latency) == 0 {
		t.Fatal("no latency chart")
	}
	for _, l := range dom.Latency {
		key := fmt.Sprintf("%s %d:%03d ep %02x", l.Trace, l.Bus, l.Device, l.Endpoint)
		ep, ok := want.endpoints[key]
		if !ok {
			t.Errorf("%s: plotted, not in report --json", key)
			continue
		}
		xOf := func(us int64) float64 {
			v := l.Lo
			if us > 0 {
				v = math.Max(l.Lo, math.Log10(float64(us)))
			}
			return l.X0 + (v-l.Lo)/(l.Hi-l.Lo)*(l.X1-l.X0)
		}
		for _, p := range l.Pct {
			var us int64
			switch p.Name {
			case "p50":
				us = ep.Latency.P50
			case "p99":
				us = ep.Latency.P99
			case "max":
				us = ep.Latency.Max
			}
			if math.Abs(p.X-xOf(us)) > 0.5 {
				t.Errorf("%s: %s marker at x=%v, report --json's %dµs is at x=%v", key, p.Name, p.X, us, xOf(us))
			}
		}
		for _, lg := range l.Legend {
			name, val, ok := strings.Cut(lg, " ")
			if !ok || (name != "p99" && name != "p50" && name != "max") {
				continue
			}
			d, err := time.ParseDuration(val)
			if err != nil {
				t.Errorf("%s: legend %q: %v", key, lg, err)
				continue
			}
			us := map[string]int64{"p50": ep.Latency.P50, "p99": ep.Latency.P99, "max": ep.Latency.Max}[name]
			if got := float64(d.Microseconds()); math.Abs(got-float64(us)) > 0.005*float64(us)+0.5 {
				t.Errorf("%s: legend %q, report --json says %dµs", key, lg, us)
			}
		}
		n := 0.0
		for _, c := range l.Bins {
			n += c
		}
		if n != float64(ep.Latency.Count) {
			t.Errorf("%s: %v transfers in the histogram, report --json counts %d", key, n, ep.Latency.Count)
		}
	}
	// Hot registers: bar lengths proportional to report --json's access
	// counts, in its order, labelled with its names.
	if len(dom.Hot) == 0 {
		t.Fatal("no hot-register chart")
	}
	for _, h := range dom.Hot {
		regs := want.registers[h.Trace]
		if len(regs) != len(h.Bars) || len(regs) == 0 {
			t.Errorf("%s: %d bars, report --json lists %d registers", h.Trace, len(h.Bars), len(regs))
			continue
		}
		top := float64(regs[0].Reads + regs[0].Writes)
		for i, bar := range h.Bars {
			r := regs[i]
			label := r.Name
			if label == "" {
				label = r.Register
			}
			n := float64(r.Reads + r.Writes)
			if bar.Label != label || math.Abs(bar.Width-n/top*h.W) > 0.5 {
				t.Errorf("%s bar %d: %q width %v; report --json: %q %v accesses (width %v)", h.Trace, i, bar.Label, bar.Width, label, n, n/top*h.W)
			}
		}
	}

	// IOTAP_UPDATE_SCREENSHOT=1 rewrites the screenshot shown in
	// docs/report.md.
	if os.Getenv("IOTAP_UPDATE_SCREENSHOT") != "" {
		img := screenshotPNG(t, ctx, b, s, domBox{0, 0, 1000, 1500})
		if err := os.WriteFile("../../docs/report-overview.png", img, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, sec := range dom.Sections {
			if sec.ID == "mmio" {
				img := screenshotPNG(t, ctx, b, s, domBox{sec.Box.X, sec.Box.Y, sec.Box.W, min(sec.Box.H, 1500)})
				if err := os.WriteFile("../../docs/report-mmio.png", img, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}

}

// openInChromium launches a headless Chromium (fresh profile, no
// background networking), opens the page from disk and waits for it to
// load. check (deferred by the caller; it also closes the browser) fails
// t on any console error or warning, uncaught exception or log error, and
// on any network request other than the page itself.
func openInChromium(t *testing.T, chromium, page string) (ctx context.Context, b *cdp.Browser, s string, check func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	b, err := cdp.Launch(ctx, chromium)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var mu sync.Mutex
	var problems, requests []string
	loaded := make(chan struct{}, 1)
	b.OnEvent(func(ev cdp.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch ev.Method {
		case "Network.requestWillBeSent":
			var p struct{ Request struct{ URL string } }
			json.Unmarshal(ev.Params, &p)
			requests = append(requests, p.Request.URL)
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string
				Args []struct{ Value any }
			}
			json.Unmarshal(ev.Params, &p)
			if p.Type == "error" || p.Type == "warning" || p.Type == "assert" {
				problems = append(problems, fmt.Sprintf("console.%s %v", p.Type, p.Args))
			}
		case "Runtime.exceptionThrown":
			problems = append(problems, "exception: "+string(ev.Params))
		case "Log.entryAdded":
			var p struct {
				Entry struct{ Level, Text, URL string }
			}
			json.Unmarshal(ev.Params, &p)
			if p.Entry.Level == "error" || p.Entry.Level == "warning" {
				problems = append(problems, fmt.Sprintf("log %s: %s %s", p.Entry.Level, p.Entry.Text, p.Entry.URL))
			}
		case "Page.loadEventFired":
			select {
			case loaded <- struct{}{}:
			default:
			}
		}
	})
	abs, _ := filepath.Abs(page)
	url := "file://" + abs
	check = func() {
		defer cancel()
		defer b.Close()
		// Events are handled on the connection's reader: no Call while
		// mu is held.
		mu.Lock()
		defer mu.Unlock()
		for _, p := range problems {
			t.Errorf("browser: %s", p)
		}
		for _, r := range requests {
			if r != url {
				t.Errorf("network request to %s (the page must load nothing)", r)
			}
		}
		if len(requests) > 1 {
			t.Errorf("%d requests, want only the page itself: %v", len(requests), requests)
		}
	}
	fail := func(err error) {
		check()
		t.Fatal(err)
	}
	if s, err = b.NewPage(ctx); err != nil {
		fail(err)
	}
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} {
		if err := b.Call(ctx, s, m, nil, nil); err != nil {
			fail(err)
		}
	}
	if err := b.Call(ctx, s, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1000, "height": 1400, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		fail(err)
	}
	if err := b.Call(ctx, s, "Page.navigate", map[string]any{"url": url}, nil); err != nil {
		fail(err)
	}
	select {
	case <-loaded:
	case <-ctx.Done():
		fail(fmt.Errorf("page did not load"))
	}
	return ctx, b, s, check
}

// reportEndpoint is a usb_endpoint record of report --json (NDJSON
// schema 1: latencies in ns), with the latencies in µs as the page labels
// them.
type reportEndpoint struct {
	Latency struct {
		Count         uint64
		P50, P99, Max int64 // µs
	}
}

type reportJSONWant struct {
	endpoints map[string]reportEndpoint
	registers map[string][]struct {
		Register, Name string
		Reads, Writes  int64
	}
}

func parseReportJSON(t *testing.T, b []byte) reportJSONWant {
	w := reportJSONWant{endpoints: map[string]reportEndpoint{}, registers: map[string][]struct {
		Register, Name string
		Reads, Writes  int64
	}{}}
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var o struct {
			Type, Trace, Source, Kind, File string
			Bus, Dev, Ep                    int
		}
		if err := json.Unmarshal(l, &o); err != nil {
			t.Fatalf("report --json: %q: %v", l, err)
		}
		switch {
		case o.Kind == "usb_endpoint":
			var r struct {
				Latency struct {
					Count uint64
					P50ns *int64 `json:"p50_ns"`
					P99ns *int64 `json:"p99_ns"`
					Maxns *int64 `json:"max_ns"`
				}
			}
			if err := json.Unmarshal(l, &r); err != nil {
				t.Fatalf("report --json: %q: %v", l, err)
			}
			var e reportEndpoint
			e.Latency.Count = r.Latency.Count
			us := func(ns *int64) int64 {
				if ns == nil {
					return 0
				}
				return *ns / 1000
			}
			e.Latency.P50, e.Latency.P99, e.Latency.Max = us(r.Latency.P50ns), us(r.Latency.P99ns), us(r.Latency.Maxns)
			w.endpoints[fmt.Sprintf("%s %d:%03d ep %02x", o.File, o.Bus, o.Dev, o.Ep)] = e
		case o.Kind == "mmio_register": // NDJSON schema 1: register is the name, location the address
			var r struct {
				Register, Location string
				Reads, Writes      int64
			}
			json.Unmarshal(l, &r)
			w.registers[o.File] = append(w.registers[o.File], struct {
				Register, Name string
				Reads, Writes  int64
			}{r.Location, r.Register, r.Reads, r.Writes})
		}
	}
	return w
}

func screenshotPNG(t *testing.T, ctx context.Context, b *cdp.Browser, s string, box domBox) []byte {
	t.Helper()
	var r struct{ Data string }
	err := b.Call(ctx, s, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": box.X, "y": box.Y, "width": box.W, "height": box.H, "scale": 1}}, &r)
	if err != nil {
		t.Fatal(err)
	}
	data, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func screenshot(t *testing.T, ctx context.Context, b *cdp.Browser, s string, box domBox) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(screenshotPNG(t, ctx, b, s, box)))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// blank reports whether fewer than 0.5% of the image's pixels differ from
// its most common colour (the background).
func blank(img image.Image) bool {
	bd := img.Bounds()
	count := map[[3]uint32]int{}
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			count[[3]uint32{r >> 8, g >> 8, b >> 8}]++
		}
	}
	most := 0
	for _, n := range count {
		most = max(most, n)
	}
	total := bd.Dx() * bd.Dy()
	return total == 0 || float64(total-most) < 0.005*float64(total)
}
