package calls

import (
	"bufio"
	"io"

	"github.com/iotap/iotap/intelpt"
)

// Output is the form in which Run writes the calls.
type Output int

const (
	OutputTree       Output = iota // the call tree (WriteTree)
	OutputJSON                     // an NDJSON input record, then an object per call as it ends (AppendNDJSON)
	OutputFolded                   // collapsed stacks weighted by self instructions (WriteFolded)
	OutputFoldedTime               // collapsed stacks weighted by self time
	OutputNone                     // nothing (the Result only)
)

// Run is the job of 'iotap pt calls': it analyzes in (Analyze with o) and
// writes its calls to w in the form out; file names the input in the
// NDJSON input record. When the analysis fails the result is nil (what
// was written is flushed); a write error comes with the result.
func Run(w io.Writer, in *Input, file string, out Output, o Options) (*Result, error) {
	clk := Clock{ToNS: in.ToNS}
	bw := bufio.NewWriterSize(w, 1<<16)
	defer bw.Flush()
	if out == OutputJSON {
		clock := ""
		if in.ToNS != nil {
			clock = intelpt.ClockPerf
		}
		bw.Write(intelpt.AppendInputNDJSON(nil, file, in.Format, clock))
		var line []byte
		onCall := o.OnCall
		o.OnCall = func(c *Call) {
			line = AppendNDJSON(line[:0], c, clk)
			bw.Write(line)
			if onCall != nil {
				onCall(c)
			}
		}
	}
	res, err := Analyze(in, o)
	if err != nil {
		return nil, err
	}
	switch out {
	case OutputFolded, OutputFoldedTime:
		err = WriteFolded(bw, res.Tree, out == OutputFoldedTime)
	case OutputTree:
		err = WriteTree(bw, res.Tree, clk.Unit())
	}
	if err != nil {
		return res, err
	}
	return res, bw.Flush()
}

// TraceBytes is the size of the input's PT data, all streams.
func (in *Input) TraceBytes() int64 {
	var n int64
	for _, s := range in.Streams {
		n += s.Len()
	}
	return n
}
