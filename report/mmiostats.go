package report

import (
	"bufio"
	"fmt"
	"io"

	"github.com/iotap/iotap/ksym"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/regdb"
)

// MMIOStatsOptions are the outputs of 'iotap mmio stats' (WriteMMIOStats).
type MMIOStatsOptions struct {
	// JSON writes NDJSON: the "input" record naming File and its detected
	// Format, then mmiotrace.AppendStatsNDJSON's records.
	JSON         bool
	File, Format string
	Top          int  // hot registers (and functions) listed
	NoNames      bool // registers not named with the shipped databases
	// Symbols, when not nil, adds the hot code: accesses by the function
	// of their PC (mmiotrace.ByFunction).
	Symbols *ksym.Table
	// Warn, when not nil, is told with Symbols that accesses were
	// recorded without a PC (a kernel not booted with
	// mmiotrace.trace_pc=1): their code stays unnamed.
	Warn func(string)
}

// WriteMMIOStats writes the summary of 'iotap mmio stats' of st (from
// mmiotrace.Analyze): the text of WriteMMIOText, and with Symbols
// mmiotrace.WriteFuncStats, or NDJSON. Registers are named by
// regdb.Binder.RegisterNames: the shipped database of each device's PCI
// id, as 'mmio names' and the timeline name them.
func WriteMMIOStats(w io.Writer, st *mmiotrace.Stats, o MMIOStatsOptions) error {
	name := func(mmiotrace.RegKey) string { return "" }
	if !o.NoNames {
		name = new(regdb.Binder).RegisterNames(st)
	}
	var funcs []mmiotrace.FuncStats
	if o.Symbols != nil {
		funcs = mmiotrace.ByFunction(st, o.Symbols.Name)
		if st.ZeroPC > 0 && o.Warn != nil {
			o.Warn(fmt.Sprintf("mmio stats: %d accesses have no PC (the kernel records PCs only when booted with mmiotrace.trace_pc=1)", st.ZeroPC))
		}
	}
	bw := bufio.NewWriter(w)
	if o.JSON {
		b := mmiotrace.AppendNDJSONInput(nil, o.File, o.Format)
		bw.Write(mmiotrace.AppendStatsNDJSON(b, st, mmiotrace.StatsJSON{Name: name, Top: o.Top, Funcs: funcs}))
	} else {
		WriteMMIOText(bw, st, name, MMIOTextOptions{Top: o.Top})
		if o.Symbols != nil {
			mmiotrace.WriteFuncStats(bw, funcs, o.Top, 5, name)
		}
	}
	return bw.Flush()
}
