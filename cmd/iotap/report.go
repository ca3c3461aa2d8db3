package main

import (
	"bufio"
	"bytes"
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

	"github.com/iotap/iotap/usbmon"
	"github.com/spf13/cobra"
)

func newReportCmd(e *env) *cobra.Command {
	var allowLoss bool
	c := &cobra.Command{
		Use:   "report DIR|FILE...",
		Short: "Summarise every trace found in directories or files, whatever its source",
		Long: `report walks the given directories (recursively) and files, recognises each
trace by its content (usbmon text, pcap or pcapng; mmiotrace logs, plain or
compressed; Intel PT raw streams or perf.data; user_events NDJSON records) and
prints, per trace, the summary of the matching 'stats' verb, then a loss
report over all of them. Files that are not traces are listed, not read.

Exit status 3 when any trace records lost or dropped data, unless --allow-loss.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(e, args, allowLoss)
		},
	}
	c.Flags().BoolVar(&allowLoss, "allow-loss", false, "exit 0 even when a trace records lost data")
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

func runReport(e *env, args []string, allowLoss bool) error {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return err
		}
		if !st.IsDir() {
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
	var others []string
	lossy := 0
	for _, p := range files {
		if err := e.ctx.Err(); err != nil {
			return err
		}
		k, ok := sniffTrace(p)
		if !ok {
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

// sniffTrace recognises a trace from its first bytes.
func sniffTrace(path string) (traceKind, bool) {
	f, err := os.Open(path)
	if err != nil {
		return traceKind{}, false
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if len(head) == 0 {
		return traceKind{}, false
	}
	switch {
	case bytes.HasPrefix(head, []byte("PERFILE2")):
		return traceKind{"pt", "perf.data", []string{"pt", "stats"}}, true
	case bytes.HasPrefix(head, []byte{0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82}):
		return traceKind{"pt", "raw Intel PT", []string{"pt", "stats"}}, true
	case isCompressed(head) || looksLikeMmiotrace(head):
		return traceKind{"mmio", "mmiotrace log", []string{"mmio", "stats"}}, true
	case bytes.HasPrefix(head, []byte(`{"name":`)):
		return traceKind{"events", "user_events NDJSON", nil}, true
	}
	if _, format, err := usbmon.NewReader(bytes.NewReader(head)); err == nil {
		return traceKind{"usb", "usbmon " + format.String(), []string{"usb", "stats"}}, true
	}
	return traceKind{}, false
}

func isCompressed(b []byte) bool {
	return bytes.HasPrefix(b, []byte{0x1f, 0x8b}) || // gzip
		bytes.HasPrefix(b, []byte{0xfd, '7', 'z', 'X', 'Z', 0}) || // xz
		bytes.HasPrefix(b, []byte{0x28, 0xb5, 0x2f, 0xfd}) // zstd
}

// looksLikeMmiotrace checks the first line for a record the mmiotrace
// tracer starts its log with.
func looksLikeMmiotrace(b []byte) bool {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	for _, p := range []string{"# tracer: mmiotrace", "VERSION ", "PCIDEV ", "MAP ", "MARK ", "LSPCI "} {
		if bytes.HasPrefix(line, []byte(p)) {
			return true
		}
	}
	return false
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
