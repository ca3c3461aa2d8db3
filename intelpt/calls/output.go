package calls

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/iotap/iotap/internal/ndjson"
)

// Clock converts trace times (TSC) to what outputs show.
type Clock struct {
	// ToNS converts a TSC value to nanoseconds; nil: times stay in TSC
	// ticks.
	ToNS func(tsc uint64) uint64
}

// Convert returns t in the clock's unit.
func (c Clock) Convert(t uint64) uint64 {
	if c.ToNS == nil {
		return t
	}
	return c.ToNS(t)
}

// Unit is "ns" or "ticks".
func (c Clock) Unit() string {
	if c.ToNS == nil {
		return "ticks"
	}
	return "ns"
}

// WriteTree writes the call tree as text: per path the number of calls,
// inclusive and self instructions and time, the function indented by
// depth. Paths are in the order they were first called.
func WriteTree(w io.Writer, root *Node, timeUnit string) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%8s %12s %12s %14s %14s  %s\n", "calls", "incl.insns", "self.insns", "incl.time", "self.time", "function")
	var walk func(n *Node, depth int)
	walk = func(n *Node, depth int) {
		if n.Count == 0 { // only calls below the resolution (Tracker.Keep)
			return
		}
		fmt.Fprintf(bw, "%8d %12d %12d %14s %14s  %s%s\n", n.Count, n.InclInsn, n.SelfInsn,
			fmtTime(n.InclTime, timeUnit), fmtTime(n.SelfTime, timeUnit), strings.Repeat("  ", depth), n.Name)
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	for _, th := range root.Children {
		// a thread's line sums its roots
		var sum Node
		sum.Name = th.Name
		for _, c := range th.Children {
			sum.InclInsn += c.InclInsn
			sum.InclTime += c.InclTime
		}
		fmt.Fprintf(bw, "%8s %12d %12s %14s %14s  %s\n", "", sum.InclInsn, "", fmtTime(sum.InclTime, timeUnit), "", th.Name)
		for _, c := range th.Children {
			walk(c, 1)
		}
	}
	return bw.Flush()
}

func fmtTime(v uint64, unit string) string {
	if unit == "ns" {
		return time.Duration(v).String()
	}
	return strconv.FormatUint(v, 10)
}

// WriteFolded writes collapsed stacks ("thread;main;f;g 123", the input
// of flamegraph.pl and speedscope): one line per call path with its self
// instructions (byTime: self time) as the weight; paths of weight 0 are
// left out.
func WriteFolded(w io.Writer, root *Node, byTime bool) error {
	bw := bufio.NewWriter(w)
	var path []string
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Count == 0 && len(path) > 0 { // only calls below the resolution (Tracker.Keep)
			return
		}
		path = append(path, strings.ReplaceAll(strings.ReplaceAll(n.Name, ";", ":"), " ", "_"))
		v := n.SelfInsn
		if byTime {
			v = n.SelfTime
		}
		if v > 0 {
			bw.WriteString(strings.Join(path, ";"))
			bw.WriteByte(' ')
			bw.WriteString(strconv.FormatUint(v, 10))
			bw.WriteByte('\n')
		}
		for _, c := range n.Children {
			walk(c)
		}
		path = path[:len(path)-1]
	}
	for _, th := range root.Children {
		walk(th)
	}
	return bw.Flush()
}

// NDJSONCall is the kind of a call's record (docs/ndjson.md).
const NDJSONCall = "pt_call"

// AppendNDJSON appends c's pt_call record (an NDJSON line): its thread
// (tid), depth, function, entry address, begin and end as trace ticks
// (TSC) and, when the clock converts them, in ns (else null), its kind,
// why it ended and its instruction counts.
func AppendNDJSON(b []byte, c *Call, clk Clock) []byte {
	b = ndjson.Begin(b, NDJSONCall)
	b = ndjson.Int(b, "tid", int64(c.Thread))
	b = ndjson.Int(b, "depth", int64(c.Depth))
	b = ndjson.Str(b, "func", c.Func)
	b = ndjson.HexUint(b, "entry", c.Entry)
	b = ndjson.Uint(b, "begin_tsc", c.Begin)
	b = ndjson.Uint(b, "end_tsc", c.End)
	if clk.ToNS != nil {
		b = ndjson.Uint(b, "begin_ns", clk.ToNS(c.Begin))
		b = ndjson.Uint(b, "end_ns", clk.ToNS(c.End))
	} else {
		b = ndjson.Null(b, "begin_ns")
		b = ndjson.Null(b, "end_ns")
	}
	b = ndjson.Str(b, "call_kind", c.Kind)
	b = ndjson.Str(b, "end_reason", c.EndReason)
	b = ndjson.Uint(b, "insns", c.EndInsn-c.BeginInsn)
	b = ndjson.Uint(b, "self_insns", c.SelfInsn)
	return ndjson.End(b)
}
