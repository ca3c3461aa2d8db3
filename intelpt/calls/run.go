package calls

import (
	"bufio"
	"errors"
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

// OutputFlags are the output flags of 'iotap pt calls': JSON (--json),
// Folded (--folded), FoldedTime (--folded-time: with Folded, weigh by
// self time), Quiet (--quiet: only the summary). Output picks Run's form
// from them. It is the command's flag set by design, so its error names
// the flags; a program that chooses a form passes an Output to Run.
type OutputFlags struct {
	JSON, Folded, FoldedTime, Quiet bool
}

// Output is the form f asks for: OutputNone with Quiet, else OutputJSON,
// OutputFoldedTime (Folded and FoldedTime), OutputFolded, or the call
// tree (FoldedTime alone changes nothing). JSON and Folded together are
// an error naming the flags.
func (f OutputFlags) Output() (Output, error) {
	switch {
	case f.JSON && f.Folded:
		return OutputTree, errors.New("give one of --json and --folded")
	case f.Quiet:
		return OutputNone, nil
	case f.JSON:
		return OutputJSON, nil
	case f.Folded && f.FoldedTime:
		return OutputFoldedTime, nil
	case f.Folded:
		return OutputFolded, nil
	}
	return OutputTree, nil
}

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
