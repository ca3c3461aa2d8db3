package report

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/timeline"
)

// TestHTMLLinksTimelineWindows writes a split timeline of the lab's e1000
// log and a report page in another directory, and follows the page's
// links: the overview and every window file on disk (and nothing else
// of the detail directory) are linked, in order, with the events the
// window files hold.
func TestHTMLLinksTimelineWindows(t *testing.T) {
	const log = "../testdata/mmiotrace/e1000-probe.log"
	dir := t.TempDir()
	out := filepath.Join(dir, "tl", "t.pftrace")
	pagePath := filepath.Join(dir, "html", "r.html")
	for _, d := range []string{filepath.Dir(out), filepath.Dir(pagePath)} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	st, err := timeline.ExportSplit(context.Background(), out, []string{log}, timeline.Options{}, timeline.SplitOptions{MaxSize: 128 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Split {
		t.Fatal("not split")
	}
	r, err := Build(context.Background(), []string{log}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var page bytes.Buffer
	if err := r.WriteHTML(&page, HTMLOptions{Timeline: NewTimelineLinks(pagePath, out, st)}); err != nil {
		t.Fatal(err)
	}
	var links []string
	for _, m := range regexp.MustCompile(`href="([^"#][^"]*)"`).FindAllStringSubmatch(page.String(), -1) {
		if strings.HasPrefix(m[1], "https://") {
			continue
		}
		p, err := url.PathUnescape(m[1])
		if err != nil {
			t.Fatal(err)
		}
		abs := filepath.Join(filepath.Dir(pagePath), filepath.FromSlash(p))
		if _, err := os.Stat(abs); err != nil {
			t.Errorf("link %q: %v", m[1], err)
		}
		links = append(links, abs)
	}
	files, err := filepath.Glob(filepath.Join(dir, "tl", "t.d", "*.pftrace"))
	if err != nil || len(files) < 3 {
		t.Fatalf("window files %v (%v)", files, err)
	}
	want := append([]string{out, filepath.Join(dir, "tl", "t.d", "index.json")}, files...)
	if strings.Join(links, "\n") != strings.Join(want, "\n") {
		t.Errorf("links:\n%s\nwant:\n%s", strings.Join(links, "\n"), strings.Join(want, "\n"))
	}
	// Each row's events are those of its window file.
	rows := regexp.MustCompile(`<tr><td><a href="[^"]*">([^<]*)</a></td><td>[^<]*</td><td>[^<]*</td><td>(\d+)</td>`).FindAllStringSubmatch(page.String(), -1)
	if len(rows) != len(files) {
		t.Fatalf("%d window rows, %d files", len(rows), len(files))
	}
	for i, w := range st.Index.Windows {
		if rows[i][1] != "../tl/t.d/"+w.File || rows[i][2] != strconv.FormatInt(w.Events, 10) {
			t.Errorf("row %d: %q, want %s with %d events", i, rows[i][0], w.File, w.Events)
		}
	}
}

// An index beside a trace (iotap index, iotap capture) is named as such
// among the files that are not traces.
func TestIndexNotATrace(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "mmio.log")
	if err := os.WriteFile(log, b, 0o600); err != nil {
		t.Fatal(err)
	}
	in, closer, err := cut.OpenFile(log, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := cut.BuildIndex(context.Background(), in, cut.DefaultInterval)
	closer.Close()
	if err != nil {
		t.Fatal(err)
	}
	idx, _ := ix.MarshalBinary()
	if err := os.WriteFile(log+cut.IndexSuffix, idx, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Build(context.Background(), []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Traces) != 1 || len(r.Others) != 1 || !strings.HasPrefix(r.Others[0].Why, "index of mmio.log") {
		t.Errorf("traces %d, others %+v", len(r.Traces), r.Others)
	}
}

// TestFoundTimelineLinked: a report of a directory holding a split
// timeline written before (iotap timeline above --max-size) picks up its
// index.json instead of exporting again: the page links its overview and
// every window on disk; an index.json whose window file is gone is not
// used and says why. A trace index (FILE.iotapidx) is said to be current,
// partial, or stale (ignored) as cut would find it.
func TestFoundTimelineLinked(t *testing.T) {
	const log = "../testdata/mmiotrace/e1000-probe.log"
	dir := t.TempDir()
	out := filepath.Join(dir, "t.pftrace")
	st, err := timeline.ExportSplit(context.Background(), out, []string{log}, timeline.Options{}, timeline.SplitOptions{MaxSize: 128 << 10})
	if err != nil || !st.Split {
		t.Fatalf("split: %v", err)
	}
	pagePath := filepath.Join(t.TempDir(), "r.html")
	r, err := Build(context.Background(), []string{log, dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Timelines) != 1 || len(r.Timelines[0].Index.Windows) != len(st.Index.Windows) {
		t.Fatalf("found timelines %+v, want the one written (%d windows)", r.Timelines, len(st.Index.Windows))
	}
	var page bytes.Buffer
	if err := r.WriteHTML(&page, HTMLOptions{Timeline: r.FoundTimelineLinks(pagePath)}); err != nil {
		t.Fatal(err)
	}
	var linked []string
	for _, m := range regexp.MustCompile(`href="([^"#][^"]*)"`).FindAllStringSubmatch(page.String(), -1) {
		if strings.HasPrefix(m[1], "https://") {
			continue
		}
		p, _ := url.PathUnescape(m[1])
		abs := filepath.Join(filepath.Dir(pagePath), filepath.FromSlash(p))
		if _, err := os.Stat(abs); err != nil {
			t.Errorf("link %q: %v", m[1], err)
		}
		linked = append(linked, abs)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "t.d", "*.pftrace"))
	want := append([]string{out, filepath.Join(dir, "t.d", "index.json")}, files...)
	if len(files) < 3 || strings.Join(linked, "\n") != strings.Join(want, "\n") {
		t.Errorf("links:\n%s\nwant:\n%s", strings.Join(linked, "\n"), strings.Join(want, "\n"))
	}

	// a window file gone: not used
	if err := os.Remove(files[1]); err != nil {
		t.Fatal(err)
	}
	r2, err := Build(context.Background(), []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	why := ""
	for _, o := range r2.Others {
		if strings.HasSuffix(o.Name, "index.json") {
			why = o.Why
		}
	}
	if len(r2.Timelines) != 0 || r2.FoundTimelineLinks(pagePath) != nil || !strings.Contains(why, "not used") {
		t.Errorf("a timeline missing a window: found %d, why %q", len(r2.Timelines), why)
	}

	// trace indexes: current, partial, stale
	tdir := t.TempDir()
	b, _ := os.ReadFile(log)
	trace := filepath.Join(tdir, "mmio.log")
	os.WriteFile(trace, b, 0o600)
	in, closer, _ := cut.OpenFile(trace, false, nil)
	ix, _ := cut.BuildIndex(context.Background(), in, cut.DefaultInterval)
	closer.Close()
	enc, _ := ix.MarshalBinary()
	os.WriteFile(trace+cut.IndexSuffix, enc, 0o600)
	whyOf := func() string {
		r, err := Build(context.Background(), []string{tdir}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if len(r.Others) != 1 {
			t.Fatalf("others %+v", r.Others)
		}
		return r.Others[0].Why
	}
	if w := whyOf(); !strings.Contains(w, "(current;") {
		t.Errorf("current index: %q", w)
	}
	ix.Partial, ix.Size = true, ix.Size/2
	enc, _ = ix.MarshalBinary()
	os.WriteFile(trace+cut.IndexSuffix, enc, 0o600)
	if w := whyOf(); !strings.Contains(w, "(partial:") {
		t.Errorf("partial index: %q", w)
	}
	ix.Partial, ix.Size = false, ix.Size*2
	enc, _ = ix.MarshalBinary()
	os.WriteFile(trace+cut.IndexSuffix, enc, 0o600)
	os.WriteFile(trace, append(b, "MARK 0.0 0.0 more\n"...), 0o600)
	if w := whyOf(); !strings.Contains(w, "(ignored: stale") {
		t.Errorf("stale index: %q", w)
	}
	os.WriteFile(trace+cut.IndexSuffix, enc[:len(enc)-3], 0o600)
	if w := whyOf(); !strings.Contains(w, "(ignored:") {
		t.Errorf("damaged index: %q", w)
	}
}
