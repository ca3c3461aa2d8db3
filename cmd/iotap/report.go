package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/iotap/iotap/timeline"
	"github.com/iotap/iotap/usbmon"
	"github.com/spf13/cobra"
)

func newReportCmd(e *env) *cobra.Command {
	var allowLoss bool
	to := &timelineOptions{window: 100 * time.Millisecond}
	c := &cobra.Command{
		Use:   "report DIR|BUNDLE|FILE... [-o FILE.pftrace]",
		Short: "Summarise every trace found in directories or files, whatever its source",
		Long: `report walks the given directories (recursively) and files, recognises each
trace by its content (usbmon text, pcap or pcapng; mmiotrace logs, plain or
compressed; Intel PT raw streams or perf.data; user_events NDJSON records) and
prints, per trace, the summary of the matching 'stats' verb, then a loss
report over all of them. Files that are not traces are listed, not read.
A bundle (a .tar.gz such as 'iotap mmio capture --bundle' writes) is read
like a directory.

With -o FILE.pftrace, report also merges the USB, MMIO and user_events traces
into one Perfetto trace, as 'iotap timeline' does; a clocks.json found among
the inputs (or --clocks) aligns their clocks.

Exit status 3 when any trace records lost or dropped data, unless --allow-loss.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			to.allowLoss = allowLoss
			return runReport(e, args, allowLoss, to)
		},
	}
	c.Flags().BoolVar(&allowLoss, "allow-loss", false, "exit 0 even when a trace records lost data")
	c.Flags().StringVarP(&to.out, "output", "o", "", "also write the merged Perfetto trace to FILE (created 0600)")
	c.Flags().StringVar(&to.db, "db", "", "register database for MMIO names in the Perfetto trace (file or shipped name)")
	c.Flags().StringVar(&to.clocks, "clocks", "", "clock sidecar aligning the sources (default: a clocks.json among the inputs)")
	return c
}

// traceKind is what report recognised a file as.
type traceKind struct {
	source string   // usb, mmio, pt, events
	format string   // human name of the format
	verb   []string // iotap verb that summarises it
}

type reportRow struct {
	path   string
	kind   traceKind
	status string
}

func runReport(e *env, args []string, allowLoss bool, to *timelineOptions) error {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return err
		}
		if !st.IsDir() && isBundle(a) {
			dir, err := os.MkdirTemp("", "iotap-report-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			members, err := extractBundle(a, dir)
			if err != nil {
				return fmt.Errorf("%s: %w", a, err)
			}
			fmt.Fprintf(e.stdout, "== bundle %s: %s\n", a, strings.Join(members, " "))
			a = dir
		} else if !st.IsDir() {
			files = append(files, a)
			continue
		}
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "fuzz" || strings.HasPrefix(d.Name(), ".")) && p != a {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	sort.Strings(files)

	var rows []reportRow
	var others, clocks []string
	lossy := 0
	for _, p := range files {
		if err := e.ctx.Err(); err != nil {
			return err
		}
		k, ok := sniffTrace(p)
		if !ok {
			if filepath.Base(p) == "clocks.json" {
				clocks = append(clocks, p)
			}
			others = append(others, p)
			continue
		}
		fmt.Fprintf(e.stdout, "== %s: %s (%s)\n", p, k.source, k.format)
		var err error
		if k.source == "events" {
			err = summariseEvents(e, p)
		} else {
			args := append(append([]string{}, k.verb...), p)
			err = run(e.ctx, args, e.stdout, e.stderr)
		}
		row := reportRow{path: p, kind: k, status: "ok"}
		var ce *codeError
		switch {
		case err == nil:
		case errors.As(err, &ce) && ce.code == exitDataLost:
			row.status = "LOSS: " + err.Error()
			lossy++
		default:
			row.status = "ERROR: " + err.Error()
		}
		rows = append(rows, row)
		fmt.Fprintln(e.stdout)
	}

	fmt.Fprintf(e.stdout, "== summary: %d traces\n", len(rows))
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.kind.source, r.kind.format, r.path, r.status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(others) > 0 {
		fmt.Fprintf(e.stdout, "not traces (%d): %s\n", len(others), strings.Join(others, " "))
	}
	if to.out != "" {
		if err := reportTimeline(e, rows, clocks, to); err != nil {
			return err
		}
	}
	if lossy > 0 && !allowLoss {
		return dataLostError("%d of %d traces record lost data", lossy, len(rows))
	}
	for _, r := range rows {
		if strings.HasPrefix(r.status, "ERROR") {
			return fmt.Errorf("%s: %s", r.path, strings.TrimPrefix(r.status, "ERROR: "))
		}
	}
	return nil
}

// sniffTrace recognises a trace from its first bytes (timeline.Detect) and
// names the verb that summarises it.
func sniffTrace(path string) (traceKind, bool) {
	f, err := os.Open(path)
	if err != nil {
		return traceKind{}, false
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	kind, err := timeline.Detect(head)
	if err != nil {
		return traceKind{}, false
	}
	switch kind {
	case timeline.KindPT:
		format := "raw Intel PT"
		if bytes.HasPrefix(head, []byte("PERFILE2")) {
			format = "perf.data"
		}
		return traceKind{"pt", format, []string{"pt", "stats"}}, true
	case timeline.KindMMIO:
		return traceKind{"mmio", "mmiotrace log", []string{"mmio", "stats"}}, true
	case timeline.KindEvents:
		return traceKind{"events", "user_events NDJSON", nil}, true
	case timeline.KindUSB:
		_, format, _ := usbmon.NewReader(bytes.NewReader(head))
		return traceKind{"usb", "usbmon " + format.String(), []string{"usb", "stats"}}, true
	}
	return traceKind{}, false
}

// summariseEvents counts user_events records (iotap events record --json)
// per event name.
func summariseEvents(e *env, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		var rec struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.Name == "" {
			return fmt.Errorf("line %d: not a user_events record", line)
		}
		counts[rec.Name]++
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", line+1, err)
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(e.stdout, "%d events\n", line)
	for _, n := range names {
		fmt.Fprintf(e.stdout, "  %-32s %d\n", n, counts[n])
	}
	return nil
}

// reportTimeline writes the Perfetto trace of the report's USB, MMIO and
// user_events traces.
func reportTimeline(e *env, rows []reportRow, clocks []string, to *timelineOptions) error {
	var inputs, skipped []string
	for _, r := range rows {
		switch {
		case strings.HasPrefix(r.status, "ERROR"):
			skipped = append(skipped, r.path+" (unreadable)")
		default:
			inputs = append(inputs, r.path)
		}
	}
	fmt.Fprintf(e.stdout, "\n== timeline: %s\n", to.out)
	for _, s := range skipped {
		fmt.Fprintf(e.stdout, "not in the timeline: %s\n", s)
	}
	if len(inputs) == 0 {
		return fmt.Errorf("report: no trace to put in %s", to.out)
	}
	o := *to
	if o.clocks != "" {
		fmt.Fprintf(e.stdout, "clocks: %s (all inputs)\n", o.clocks)
	} else {
		// A clocks.json aligns the traces of its own directory (an
		// 'iotap capture' directory), not the others.
		byDir := map[string]*timeline.Clocks{}
		for _, p := range clocks {
			c, err := timeline.LoadClocks(p)
			if err != nil {
				return err
			}
			byDir[filepath.Dir(p)] = c
			fmt.Fprintf(e.stdout, "clocks: %s (the traces of %s)\n", p, filepath.Dir(p))
		}
		for _, in := range inputs {
			if c, ok := byDir[filepath.Dir(in)]; ok {
				if o.inputClocks == nil {
					o.inputClocks = map[string]*timeline.Clocks{}
				}
				o.inputClocks[in] = c
			}
		}
	}
	st, err := exportTimeline(e, &o, inputs)
	if err != nil {
		return err
	}
	printTimelineStats(e.stdout, o.out, st)
	return nil
}

// isBundle reports whether path is a gzip-compressed tar archive.
func isBundle(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return false
	}
	defer zr.Close()
	var hdr [512]byte
	if _, err := io.ReadFull(zr, hdr[:]); err != nil {
		return false
	}
	return bytes.Equal(hdr[257:262], []byte("ustar"))
}

// maxBundleBytes bounds what extractBundle writes.
const maxBundleBytes = 8 << 30

// extractBundle writes the regular files of a tar.gz bundle into dir
// (flattened to their base names, mode 0600) and returns their names.
func extractBundle(path, dir string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var names []string
	var total int64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names, nil
		}
		if err != nil {
			return names, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := filepath.Base(filepath.Clean("/" + h.Name))
		if name == "/" || name == "." || strings.HasPrefix(name, ".") {
			continue
		}
		out, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return names, err
		}
		n, err := io.Copy(out, io.LimitReader(tr, maxBundleBytes-total+1))
		total += n
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return names, err
		}
		if total > maxBundleBytes {
			return names, fmt.Errorf("bundle larger than %d bytes", int64(maxBundleBytes))
		}
		names = append(names, name)
	}
}
