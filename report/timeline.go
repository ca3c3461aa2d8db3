package report

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/iotap/iotap/timeline"
)

// TimelineLinks is the Perfetto timeline written with the report, which
// the HTML page links: the trace, or when it was split (timeline.
// ExportSplit) the overview and every detail window with its time range,
// events, loss and busiest tracks.
type TimelineLinks struct {
	// Trace is the path of the trace (the overview when split), as the
	// page should link it: relative to the page's directory.
	Trace string
	// Index is the split timeline's index.json, nil when the timeline is
	// one file; its windows' files are in timeline.DetailDir(Trace).
	Index *timeline.Index
}

// NewTimelineLinks returns the links to the timeline out (as written,
// with st its result) from an HTML page written to page.
func NewTimelineLinks(page, out string, st *timeline.SplitStats) *TimelineLinks {
	rel := out
	if r, err := filepath.Rel(filepath.Dir(page), out); err == nil {
		rel = r
	}
	l := &TimelineLinks{Trace: rel}
	if st != nil && st.Split {
		l.Index = st.Index
	}
	return l
}

// FoundTimeline is a split timeline found among the report's inputs: the
// overview and its detail directory's index.json, as 'iotap timeline' or
// 'iotap report -o FILE.pftrace' wrote them above --max-size.
type FoundTimeline struct {
	Overview string // path of the overview trace
	Index    *timeline.Index
}

// maxIndexJSON bounds the index.json files read.
const maxIndexJSON = 64 << 20

// loadFoundTimeline reads the index.json at path, in a detail directory
// X.d: it is a split timeline when it parses, names its overview, and the
// overview and every window file exist.
func loadFoundTimeline(path string) (*FoundTimeline, error) {
	dir := filepath.Dir(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var x timeline.Index
	if err := json.NewDecoder(io.LimitReader(f, maxIndexJSON)).Decode(&x); err != nil {
		return nil, fmt.Errorf("not a split timeline's index: %v", err)
	}
	if x.Overview == "" || filepath.Base(x.Overview) != x.Overview || timeline.DetailDir(filepath.Join(filepath.Dir(dir), x.Overview)) != dir {
		return nil, fmt.Errorf("its overview %q is not beside %s", x.Overview, filepath.Base(dir))
	}
	ov := filepath.Join(filepath.Dir(dir), x.Overview)
	if _, err := os.Stat(ov); err != nil {
		return nil, fmt.Errorf("its overview: %v", err)
	}
	for _, w := range x.Windows {
		if filepath.Base(w.File) != w.File {
			return nil, fmt.Errorf("window %q is not in %s", w.File, filepath.Base(dir))
		}
		if _, err := os.Stat(filepath.Join(dir, w.File)); err != nil {
			return nil, fmt.Errorf("window %s: %v", w.File, err)
		}
	}
	return &FoundTimeline{Overview: ov, Index: &x}, nil
}

// FoundTimelineLinks returns the links to the first split timeline found
// among the inputs (Report.Timelines) from an HTML page written to page,
// or nil when none was found: a report that writes no timeline itself
// links the one written before instead of reading the traces again.
func (r *Report) FoundTimelineLinks(page string) *TimelineLinks {
	if len(r.Timelines) == 0 {
		return nil
	}
	ft := r.Timelines[0]
	rel := ft.Overview
	if p, err := filepath.Rel(filepath.Dir(page), ft.Overview); err == nil {
		rel = p
	}
	return &TimelineLinks{Trace: rel, Index: ft.Index}
}

// htmlMaxWindows bounds the windows listed on the page (index.json lists
// them all).
const htmlMaxWindows = 1000

// href turns a relative file path into a link.
func href(path string) string {
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i, p := range parts {
		if p != ".." && p != "." {
			parts[i] = url.PathEscape(p)
		}
	}
	return strings.Join(parts, "/")
}

func (l *TimelineLinks) html(p *page) {
	p.f(`<section class="timeline" id="timeline"><h2>Perfetto timeline</h2>`)
	if l.Index == nil {
		p.f(`<p>All sources on one clock: <a href="%s">%s</a> (open it in <a href="https://ui.perfetto.dev">ui.perfetto.dev</a>).</p></section>`,
			esc(href(l.Trace)), esc(l.Trace))
		return
	}
	x := l.Index
	dir := timeline.DetailDir(l.Trace)
	p.f(`<p>All sources on one clock, too big for one file of at most %s: the overview of the whole capture, <a href="%s">%s</a> (counters in %d buckets of %s), and the full detail in %d windows of <a href="%s">%s</a>, each a trace of its own (open them in <a href="https://ui.perfetto.dev">ui.perfetto.dev</a>). Times are from the start of the timeline.</p>`,
		fmtSize(x.MaxSize), esc(href(l.Trace)), esc(l.Trace), x.Buckets, fmtSeconds(float64(x.BucketNS)/1e9),
		len(x.Windows), esc(href(dir+"/index.json")), esc(dir+"/index.json"))
	p.f(`<table class="windows"><tr><th>window</th><th>from</th><th>to</th><th>events</th><th>lost</th><th>size</th><th>busiest</th></tr>`)
	for i, w := range x.Windows {
		if i == htmlMaxWindows {
			p.f(`<tr><td colspan="7">… %d more windows (index.json lists them)</td></tr>`, len(x.Windows)-i)
			break
		}
		lost, cls := "0", ""
		if w.Lost > 0 {
			lost, cls = fmt.Sprint(w.Lost), ` class="loss"`
		}
		busiest := ""
		if len(w.Top) > 0 {
			busiest = fmt.Sprintf("%s (%d)", w.Top[0].Track, w.Top[0].Events)
		}
		file := dir + "/" + w.File
		p.f(`<tr><td><a href="%s">%s</a></td><td>%s</td><td>%s</td><td>%d</td><td%s>%s</td><td>%s</td><td>%s</td></tr>`,
			esc(href(file)), esc(file), fmtSeconds(float64(w.StartNS-x.StartNS)/1e9), fmtSeconds(float64(w.EndNS-x.StartNS)/1e9),
			w.Events, cls, lost, fmtSize(w.Bytes), esc(busiest))
	}
	p.f(`</table></section>`)
}

// fmtSize formats a byte count.
func fmtSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
