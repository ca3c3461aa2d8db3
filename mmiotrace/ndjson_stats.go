package mmiotrace

import (
	"strconv"

	"github.com/iotap/iotap/internal/ndjson"
)

// Record kinds of 'iotap mmio stats --json' (and of the MMIO inputs of
// 'iotap report --json'), docs/ndjson.md.
const (
	NDJSONSummary  = "mmio_summary"   // the whole log
	NDJSONMapStats = "mmio_map_stats" // one mapping: its accesses
	NDJSONRegister = "mmio_register"  // one hot register
	NDJSONFunction = "mmio_function"  // one function of the accessing code (--symbols)
	NDJSONPoll     = "mmio_poll"      // one polling loop
)

// StatsJSON is what AppendStatsNDJSON writes of a Stats.
type StatsJSON struct {
	File  string              // the input, "" for none (mmio stats: left out)
	Name  func(RegKey) string // the register's name, "" when unknown (nil: none)
	Top   int                 // hot registers and functions written, at most (negative: all)
	Funcs []FuncStats         // by function (--symbols), nil for none
	Loops int                 // polling loops written (0: all of st.Loops)
}

// AppendRegLocation appends the members that place a register: "location"
// (RegKey.String: "0000:00:03.0/0+0x10", or the physical address when no
// PCIDEV record describes the BAR), "bar" and "offset" (null outside a
// known BAR), "width", and "register", its name (null when unknown).
func AppendRegLocation(b []byte, k RegKey, name string) []byte {
	return ndjson.StrOrNull(appendRegKey(b, k), "register", name)
}

// appendRegKey is AppendRegLocation without "register".
func appendRegKey(b []byte, k RegKey) []byte {
	// "location": RegKey.String, without its allocations
	b = append(ndjson.Key(b, "location"), '"')
	if k.HasBAR {
		b = appendPCIAddr(b, k.Dev)
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(k.BAR), 10)
		b = append(b, '+')
	}
	b = append(b, '0', 'x')
	b = strconv.AppendUint(b, k.Offset, 16)
	b = append(b, '"')
	if k.HasBAR {
		b = append(ndjson.Key(b, "bar"), '"')
		b = appendPCIAddr(b, k.Dev)
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(k.BAR), 10)
		b = append(b, '"')
		b = ndjson.HexUint(b, "offset", k.Offset)
	} else {
		b = ndjson.Null(b, "bar")
		b = ndjson.Null(b, "offset")
	}
	return ndjson.Uint(b, "width", uint64(k.Width))
}

// AppendStatsNDJSON appends the records of 'iotap mmio stats --json' for
// st: one mmio_summary, an mmio_map_stats per mapping, an mmio_register per
// hot register, an mmio_function per function (with Funcs), an mmio_poll
// per polling loop. With File, every record carries "file".
func AppendStatsNDJSON(b []byte, st *Stats, o StatsJSON) []byte {
	name := func(k RegKey) string {
		if o.Name == nil {
			return ""
		}
		return o.Name(k)
	}
	begin := func(b []byte, kind string) []byte {
		b = ndjson.Begin(b, kind)
		if o.File != "" {
			b = ndjson.Str(b, "file", o.File)
		}
		return b
	}
	b = begin(b, NDJSONSummary)
	b = ndjson.Int(b, "lines", st.Lines)
	b = ndjson.Open(b, "records")
	for k, n := range st.Kinds {
		if n > 0 {
			b = ndjson.Int(b, Kind(k).String(), n)
		}
	}
	b = ndjson.Close(b)
	b = ndjson.Uint(b, "lost", st.Lost)
	b = ndjson.Int(b, "skipped", st.Skipped)
	b = ndjson.Int(b, "polling_loops", st.LoopCount)
	b = ndjson.End(b)
	for _, m := range st.Maps {
		b = begin(b, NDJSONMapStats)
		b = ndjson.Int(b, "map_id", int64(m.ID))
		b = ndjson.HexUint(b, "phys", m.Phys)
		b = ndjson.Uint(b, "length", m.Len)
		b = ndjson.Int(b, "reads", m.Reads)
		b = ndjson.Int(b, "writes", m.Writes)
		b = ndjson.End(b)
	}
	for i, r := range st.Regs {
		if o.Top >= 0 && i >= o.Top {
			break
		}
		b = begin(b, NDJSONRegister)
		b = AppendRegLocation(b, r.Key, name(r.Key))
		b = ndjson.Int(b, "reads", r.Reads)
		b = ndjson.Int(b, "writes", r.Writes)
		b = ndjson.HexUint(b, "last_value", r.LastValue)
		b = ndjson.Int(b, "poll_loops", r.PollLoops)
		b = ndjson.Int(b, "poll_reads", r.PollReads)
		b = ndjson.End(b)
	}
	for i, f := range o.Funcs {
		if o.Top >= 0 && i >= o.Top {
			break
		}
		b = begin(b, NDJSONFunction)
		b = ndjson.Str(b, "func", f.Func)
		b = ndjson.Int(b, "reads", f.Reads)
		b = ndjson.Int(b, "writes", f.Writes)
		b = ndjson.Int(b, "pcs", int64(f.PCs))
		b = ndjson.OpenArray(b, "registers")
		for _, r := range f.Regs {
			b = ndjson.OpenElem(b)
			b = AppendRegLocation(b, r.Key, name(r.Key))
			b = ndjson.Int(b, "reads", r.Reads)
			b = ndjson.Int(b, "writes", r.Writes)
			b = ndjson.Close(b)
		}
		b = ndjson.CloseArray(b)
		b = ndjson.End(b)
	}
	for i := range st.Loops {
		if o.Loops > 0 && i >= o.Loops {
			break
		}
		l := &st.Loops[i]
		b = begin(b, NDJSONPoll)
		b = AppendRegLocation(b, l.Key, name(l.Key))
		b = ndjson.Int(b, "reads", l.Count)
		b = ndjson.HexUint(b, "first_value", l.First)
		b = ndjson.HexUint(b, "last_value", l.Last)
		b = ndjson.Str(b, "what", l.Describe())
		b = ndjson.Int(b, "line", l.Line)
		b = ndjson.Uint(b, "start_ns", l.StartTime.NS)
		b = ndjson.Uint(b, "end_ns", l.EndTime.NS)
		b = ndjson.End(b)
	}
	return b
}

// Record kinds of 'iotap mmio diff --json'.
const (
	NDJSONDiff        = "mmio_diff"         // one step of the alignment
	NDJSONDiffSummary = "mmio_diff_summary" // the counts, last
)

// DiffOpName is the "op" of a DiffOp in NDJSON: same, changed, only_a,
// only_b.
func DiffOpName(op byte) string {
	switch op {
	case ' ':
		return "same"
	case '~':
		return "changed"
	case '-':
		return "only_a"
	case '+':
		return "only_b"
	}
	return string(op)
}

// AppendDiffNDJSON appends the mmio_diff record of op: the register, and
// per side present (a_, b_) the line, value and repeat count.
func AppendDiffNDJSON(b []byte, op *DiffOp) []byte {
	acc := op.A
	if acc == nil {
		acc = op.B
	}
	b = ndjson.Begin(b, NDJSONDiff)
	b = ndjson.Str(b, "op", DiffOpName(op.Op))
	b = ndjson.Str(b, "access", acc.Kind.String())
	b = appendRegKey(b, acc.Key)
	side := func(b []byte, p string, a *Access) []byte {
		if a == nil {
			return b
		}
		b = ndjson.Int(b, p+"line", a.Line)
		b = ndjson.HexUint(b, p+"value", a.Value)
		return ndjson.Int(b, p+"count", a.Count)
	}
	b = side(b, "a_", op.A)
	b = side(b, "b_", op.B)
	return ndjson.End(b)
}

// DiffCounts counts the steps of a diff by op.
type DiffCounts struct {
	AAccesses, BAccesses        int
	Same, Changed, OnlyA, OnlyB int
}

// Add counts op.
func (c *DiffCounts) Add(op *DiffOp) {
	switch op.Op {
	case ' ':
		c.Same++
	case '~':
		c.Changed++
	case '-':
		c.OnlyA++
	case '+':
		c.OnlyB++
	}
}

// AppendNDJSON appends the mmio_diff_summary record.
func (c *DiffCounts) AppendNDJSON(b []byte) []byte {
	b = ndjson.Begin(b, NDJSONDiffSummary)
	b = ndjson.Int(b, "a_accesses", int64(c.AAccesses))
	b = ndjson.Int(b, "b_accesses", int64(c.BAccesses))
	b = ndjson.Int(b, "same", int64(c.Same))
	b = ndjson.Int(b, "changed", int64(c.Changed))
	b = ndjson.Int(b, "only_a", int64(c.OnlyA))
	b = ndjson.Int(b, "only_b", int64(c.OnlyB))
	return ndjson.End(b)
}
