package detect

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/internal/mapfile"
)

// PTWrap wraps the reads of a raw PT file that is streamed (PTInput.Stream)
// before they are decoded, e.g. to count them for a progress line; ra,
// the same file read at offsets, is nil when it is not read so (standard
// input, or Dump). It is called only for a streamed input.
type PTWrap func(r io.Reader, ra io.ReaderAt) (io.Reader, io.ReaderAt)

// wrap returns in's stream and file, through w when set.
func (in *PTInput) wrap(w PTWrap, at bool) (io.Reader, io.ReaderAt) {
	var r io.Reader = in.Stream
	var ra io.ReaderAt
	if at && in.File != os.Stdin {
		// A file cut shorter while read ends in an error, not early.
		ra, _ = mapfile.NewReaderAt(in.File, in.Path)
	}
	if w != nil {
		r, ra = w(r, ra)
	}
	return r, ra
}

// Dump lists in as 'iotap pt dump' does, with the decoder configuration
// cfg (in.Config with the user's timing parameters): a streamed raw file
// as it is read, in constant memory, its text by segments on o.Workers
// goroutines when it is a regular file large enough (intelpt.DumpFile,
// the same listing; 0: intelpt.StatsWorkers decides; o.At and o.Size
// are set here) (intelpt.DumpStream: a trace without
// a PSB is an error wrapping intelpt.ErrNoPSB); a loaded input stream by
// stream, a perf.data's streams read from the file as they come
// (intelpt.DumpInput: sum.Streams is 0 when none is of o.CPU). Errors
// name the input; what decoding met is in the summary (Loss).
func (in *PTInput) Dump(ctx context.Context, w io.Writer, cfg intelpt.Config, opt intelpt.DumpOptions, o intelpt.DumpInputOptions, wrap PTWrap) (sum intelpt.DumpSummary, err error) {
	if in.Stream != nil {
		size := in.Size()
		r, ra := in.wrap(wrap, !o.JSON && intelpt.StatsWorkers(size, o.Workers) > 1)
		if ra != nil {
			o.At, o.Size = ra, size
		}
		sum, err = intelpt.DumpStream(ctx, w, r, cfg, opt, o)
	} else {
		sum, err = intelpt.DumpInput(w, in.Loaded, cfg, opt, o)
	}
	return sum, mapfile.Named(in.Path, err)
}

// Stats computes the statistics of every stream of in as 'iotap pt
// stats' does, with the decoder configuration cfg: a streamed raw file
// as it is read, or by segments between PSBs on workers goroutines when
// it is a regular file large enough (intelpt.ComputeStreamStats, the
// same result; 0: intelpt.StatsWorkers decides), named by in.Path; a
// loaded input stream by stream, a perf.data's read from the file as
// they come (intelpt.ReadInputStats). Standard input without a PSB is
// an error wrapping intelpt.ErrNoPSB (a file's head was checked by
// OpenPT). Errors name the input; negative workers is an
// *intelpt.ArgError.
func (in *PTInput) Stats(ctx context.Context, cfg intelpt.Config, workers int, wrap PTWrap) ([]intelpt.StreamStats, error) {
	if workers < 0 { // for every input, as ComputeStreamStats refuses it for a raw one
		return nil, &intelpt.ArgError{Field: "PTInput.Stats workers", Value: workers, Want: "0 (chosen by the size of the trace) or more"}
	}
	if in.Stream == nil {
		items, err := intelpt.ReadInputStats(ctx, in.Loaded, in.Path, cfg)
		if err != nil {
			return items, mapfile.Named(in.Path, err)
		}
		return items, nil
	}
	r, ra := in.wrap(wrap, true)
	s, err := intelpt.ComputeStreamStats(ctx, r, ra, in.Size(), cfg, workers)
	if err != nil {
		return nil, mapfile.Named(in.Path, err)
	}
	if s.PSBs == 0 {
		return nil, fmt.Errorf("%s: %w: no PSB in %d bytes", in.Path, intelpt.ErrNoPSB, s.Bytes)
	}
	return []intelpt.StreamStats{{Name: in.Path, CPU: -1, Stats: s}}, nil
}
