package doctor

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/iotap/iotap/internal/ndjson"
)

// NDJSON record kinds of 'iotap doctor --json' (docs/ndjson.md).
const (
	NDJSONFacility = "doctor_facility"
	NDJSONSummary  = "doctor_summary"
)

// AppendNDJSON appends r as 'iotap doctor --json' writes it: the "input"
// record (source "doctor"; file is the system root inspected, "" for this
// machine: null), one doctor_facility record per facility (name,
// available, detail, and the remedy, null when there is none), then a
// doctor_summary record (kernel release, facilities checked, missing).
func (r Report) AppendNDJSON(b []byte, root string) []byte {
	b = ndjson.End(ndjson.Input(b, "doctor", root, "", ""))
	missing := 0
	for i := range r.Facilities {
		f := &r.Facilities[i]
		b = ndjson.Begin(b, NDJSONFacility)
		b = ndjson.Str(b, "name", f.Name)
		b = ndjson.Bool(b, "available", f.Available)
		b = ndjson.Str(b, "detail", f.Detail)
		b = ndjson.StrOrNull(b, "remedy", f.Remedy)
		b = ndjson.End(b)
		if !f.Available {
			missing++
		}
	}
	b = ndjson.Begin(b, NDJSONSummary)
	b = ndjson.StrOrNull(b, "kernel", r.Kernel)
	b = ndjson.Int(b, "facilities", int64(len(r.Facilities)))
	b = ndjson.Int(b, "missing", int64(missing))
	return ndjson.End(b)
}

// WriteText writes r as 'iotap doctor' prints it: the kernel, a line per
// facility (name, available or MISSING, detail) with its remedy below,
// and the count of facilities available.
func (r Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "kernel %s\n\n", r.Kernel)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	missing := 0
	for _, f := range r.Facilities {
		state := "available"
		if !f.Available {
			state = "MISSING"
			missing++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Name, state, f.Detail)
		if f.Remedy != "" {
			fmt.Fprintf(tw, "\t\tremedy: %s\n", f.Remedy)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d of %d facilities available\n", len(r.Facilities)-missing, len(r.Facilities))
	return err
}
