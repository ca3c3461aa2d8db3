package calls

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
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

// AppendJSON appends c as one JSON object (NDJSON line): thread, depth,
// function, begin, end (in the clock's unit), kind, end_reason and the
// instruction counts.
func AppendJSON(b []byte, c *Call, clk Clock) []byte {
	b = append(b, `{"thread":`...)
	b = strconv.AppendInt(b, int64(c.Thread), 10)
	b = append(b, `,"depth":`...)
	b = strconv.AppendInt(b, int64(c.Depth), 10)
	b = append(b, `,"function":`...)
	b = appendJSONString(b, c.Func)
	b = append(b, `,"begin":`...)
	b = strconv.AppendUint(b, clk.Convert(c.Begin), 10)
	b = append(b, `,"end":`...)
	b = strconv.AppendUint(b, clk.Convert(c.End), 10)
	b = append(b, `,"kind":"`...)
	b = append(b, c.Kind...)
	b = append(b, `","end_reason":"`...)
	b = append(b, c.EndReason...)
	b = append(b, `","insns":`...)
	b = strconv.AppendUint(b, c.EndInsn-c.BeginInsn, 10)
	b = append(b, `,"self_insns":`...)
	b = strconv.AppendUint(b, c.SelfInsn, 10)
	return append(b, "}\n"...)
}

func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
