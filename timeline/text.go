package timeline

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/iotap/iotap/detect"
)

// The text summary of 'iotap timeline', the directory expansion of its
// arguments and its checks of the trace size, for programs that export
// as the command does.

// WriteTable writes what Export wrote to out: its counts, then a table of
// the inputs (source, path, events, span, lost, clock, aligned), then
// whether the sources are aligned.
func (st *Stats) WriteTable(w io.Writer, out string) {
	ws := st.Writer
	fmt.Fprintf(w, "wrote %s: %d tracks, %d slices, %d instants, %d counter values, %d bytes\n",
		out, ws.Tracks, ws.Slices, ws.Instants, ws.Counters, ws.Bytes)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SOURCE\tINPUT\tEVENTS\tSPAN\tLOST\tCLOCK\tALIGNED")
	aligned, inputs := 0, 0
	for _, in := range st.Inputs {
		span := time.Duration(in.LastNS - in.FirstNS)
		lost := in.Lost + in.Skipped
		a := "no"
		if in.Aligned {
			a = "ALIGNED"
		}
		if in.Kind != "markers" {
			inputs++
			if in.Aligned {
				aligned++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%v\t%d\t%s\t%s\n", in.Kind, in.Path, in.Events, span, lost, in.Clock, a)
	}
	tw.Flush()
	switch {
	case st.Aligned:
	case aligned == 0:
		fmt.Fprintln(w, "sources not aligned: each starts at 0 (no --clocks)")
	default:
		fmt.Fprintf(w, "%d of %d inputs aligned by their clocks file; the others are not aligned: each starts at 0\n", aligned, inputs)
	}
}

// WriteWindows writes what a split export wrote: the overview out and a
// table of the detail windows (file, time range, events, lost, bytes,
// busiest track).
func (st *SplitStats) WriteWindows(w io.Writer, out string) {
	idx := st.Index
	fmt.Fprintf(w, "the full detail is over --max-size %d bytes: %s is the overview (%d bytes, %d buckets of %v), "+
		"the detail is in %d windows in %s/ (index.json lists them)\n",
		idx.MaxSize, out, st.OverviewBytes, idx.Buckets, time.Duration(idx.BucketNS), len(idx.Windows), st.Dir)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WINDOW\tFROM\tTO\tEVENTS\tLOST\tBYTES\tBUSIEST")
	for _, win := range idx.Windows {
		busiest := "-"
		if len(win.Top) > 0 {
			busiest = fmt.Sprintf("%s (%d)", win.Top[0].Track, win.Top[0].Events)
		}
		fmt.Fprintf(tw, "%s\t%v\t%v\t%d\t%d\t%d\t%s\n", win.File, time.Duration(win.StartNS-idx.StartNS),
			time.Duration(win.EndNS-idx.StartNS), win.Events, win.Lost, win.Bytes, busiest)
	}
	tw.Flush()
}

// Loss lists, per input, what the timeline lacks: events the input
// records as lost, undecodable records skipped, a truncated input.
func (st *Stats) Loss() []string {
	var parts []string
	for _, in := range st.Inputs {
		if in.Lost > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d events lost", in.Path, in.Lost))
		}
		if in.Skipped > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d undecodable records skipped", in.Path, in.Skipped))
		}
		if in.Truncated {
			what := "truncated"
			if in.Truncation != "" {
				what += ": " + in.Truncation
			}
			parts = append(parts, fmt.Sprintf("%s: %s (what comes before is in the timeline)", in.Path, what))
		}
	}
	return parts
}

// DirInputs lists the traces in dir (an 'iotap capture' directory; not
// recursively): its regular files, not hidden, whose content is a trace
// (package detect), in name order; and the path of its clocks.json (""
// when it has none). A file that cannot be read is an error, a file that
// is not a trace is left out.
func DirInputs(dir string) (traces []string, clocks string, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, "", err
	}
	for _, d := range ents {
		p := filepath.Join(dir, d.Name())
		if d.Name() == "clocks.json" {
			clocks = p
			continue
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".") {
			continue
		}
		_, err := detect.File(p)
		if errors.Is(err, detect.ErrNotTrace) {
			continue
		}
		if err != nil {
			return nil, clocks, err // unreadable is not "no trace"
		}
		traces = append(traces, p)
	}
	return traces, clocks, nil
}

// EstimateSize extrapolates the size of a trace from written, the bytes
// written while read of total input bytes were read: ok once 2 % and at
// least 8 MB of the input were read.
func EstimateSize(read, total, written int64) (int64, bool) {
	if total <= 0 || read < 8<<20 || read*50 < total {
		return 0, false
	}
	return int64(float64(written) * float64(total) / float64(read)), true
}

// SizeWarning is the warning for a trace at path of size bytes (estimated:
// extrapolated early by EstimateSize) over limit, the size the Perfetto UI
// opens (DefaultMaxSize): it says why and what to do instead. "" when size
// is not over limit.
func SizeWarning(path string, size, limit int64, estimated bool) string {
	if size <= limit {
		return ""
	}
	what := fmt.Sprintf("%s is %d MB", path, size>>20)
	if estimated {
		what = fmt.Sprintf("%s will be about %d MB (estimated from the start of the inputs)", path, size>>20)
	}
	return fmt.Sprintf("%s: the Perfetto UI holds a whole trace in browser memory "+
		"(2-4 times the file size, about 2 GB per tab), so it is unlikely to open a trace over %d MB. "+
		"Leave out --max-size 0 to get an overview and detail windows under %d MB each, "+
		"cut the inputs to a time window (iotap mmio filter --from/--to, iotap usb read --from/--to), "+
		"or export the data as Parquet tables (iotap export) and query it instead; "+
		"trace_processor (Perfetto's command-line tool) also reads big traces",
		what, limit>>20, limit>>20)
}
