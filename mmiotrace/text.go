package mmiotrace

import (
	"fmt"
	"io"
	"sort"

	"github.com/iotap/iotap/ksym"
)

// The outputs of 'iotap mmio read': the record formats (kernel text,
// NDJSON, text annotated with symbols), the --check summary, and the
// words for what a read of a log lost.

// LossMessages says what a read of a log lost: lost events (the kernel's
// "Lost N events." marks), skipped bad lines (skipped, the first one's
// error firstSkip), a log cut inside line lines. None: nil.
func LossMessages(lost uint64, skipped int64, firstSkip error, truncated bool, lines int64) []string {
	var msgs []string
	if lost > 0 {
		msgs = append(msgs, fmt.Sprintf("the log records %d lost events (kernel \"Lost N events.\" marks): the trace is incomplete", lost))
	}
	if skipped > 0 {
		msgs = append(msgs, fmt.Sprintf("%d bad lines skipped (first: %v)", skipped, firstSkip))
	}
	if truncated {
		msgs = append(msgs, fmt.Sprintf("the log is cut: it ends inside line %d, whose record is lost", lines))
	}
	return msgs
}

// Loss is LossMessages of what r has read so far.
func (r *Reader) Loss() []string {
	return LossMessages(r.Lost(), r.Skipped(), r.FirstSkipError(), r.Truncated(), r.Line())
}

// CountKinds reads the rest of r and counts its records by kind.
func CountKinds(r *Reader) (map[Kind]int64, error) {
	// An array, not a map: hashing a key per record cost a fifth of the
	// parse.
	var perKind [256]int64
	err := r.Do(func() error {
		var rec Record
		for {
			err := r.ReadInto(&rec)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			perKind[rec.Kind]++
		}
	})
	if err != nil {
		return nil, err
	}
	counts := map[Kind]int64{}
	for k, n := range perKind {
		if n > 0 {
			counts[Kind(k)] = n
		}
	}
	return counts, nil
}

// WriteCounts writes the summary of 'iotap mmio read --check': the lines
// r read, counts (CountKinds) by kind, lost events, skipped lines and the
// compression of the input.
func WriteCounts(w io.Writer, r *Reader, counts map[Kind]int64) {
	kinds := make([]Kind, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i] < kinds[j] })
	fmt.Fprintf(w, "lines: %d\n", r.Line())
	for _, k := range kinds {
		fmt.Fprintf(w, "%-8s %d\n", k.String()+":", counts[k])
	}
	fmt.Fprintf(w, "lost events: %d\nskipped lines: %d\n", r.Lost(), r.Skipped())
	if c := r.Compression(); c != None {
		fmt.Fprintf(w, "compression: %v\n", c)
	}
}

// Formatter returns the record format of 'iotap mmio read': the kernel's
// text format (AppendText), NDJSON (asJSON: NDJSONEncoder, with the
// function of the PC from tab), or with tab the text with the function of
// each PC after a tab (an annotated listing, no longer the kernel
// format). It may be called from several goroutines at once (ConvertLog);
// tab is only read.
func Formatter(asJSON bool, tab *ksym.Table) AppendFunc {
	switch {
	case asJSON:
		enc := &NDJSONEncoder{}
		if tab != nil {
			enc.Func = tab.Name
		}
		return enc.Append
	case tab != nil:
		return func(dst []byte, r *Record) ([]byte, error) {
			dst = AppendRecord(dst, r)
			if r.PC != 0 {
				if n := tab.Name(r.PC); n != "" {
					dst = append(append(append(dst[:len(dst)-1], '\t'), n...), '\n')
				}
			}
			return dst, nil
		}
	}
	return AppendText
}
