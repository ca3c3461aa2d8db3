package calls

import (
	"errors"
	"fmt"
	"io"

	"github.com/iotap/iotap/intelpt"
)

// ErrStdin is the error of Job.Open and FlowJob.Open for "-": a
// perf.data or capture directory (and pt calls' raw trace) is read by its
// name, not from standard input; FlowJob reads a raw trace from standard
// input when its image is given (Raw, ELF).
var ErrStdin = errors.New("calls: the input is read by its name, not from standard input")

// errEmptyTrace is the error of an empty raw trace (FlowJob.Open,
// Job.Open; they name it): no PSB, not an Intel PT trace.
var errEmptyTrace = fmt.Errorf("%w: empty (the input has no bytes)", intelpt.ErrNoPSB)

// FlowArgError is FlowJob.Open's error for a field of the job that is
// wrong: Field names it ("Trace", "CPU", "FilterCfg"), Index is the
// element of FilterCfg (0 for the others).
type FlowArgError struct {
	Field string
	Index int
	Err   error
}

func (e *FlowArgError) Error() string {
	f := e.Field
	if f == "FilterCfg" {
		f += fmt.Sprintf("[%d]", e.Index)
	}
	return "calls: FlowJob." + f + ": " + e.Err.Error()
}
func (e *FlowArgError) Unwrap() error { return e.Err }

// FlowJob is the whole 'iotap pt flow' job: the trace, the memory image
// it ran over, the decoder's configuration and the listing's options. A
// program fills it as the command's flags do; Open checks it, opens the
// trace and builds the image, FlowTrace.Run lists the instructions and
// FlowTrace.Loss says what the listing lacks.
type FlowJob struct {
	// Trace is the input. With Raw or ELF, a raw PT trace
	// FILE[:FROM[-TO]] (intelpt.SplitFileRange; "-": standard input);
	// without, a perf.data file or an 'iotap pt capture' directory, whose
	// sideband names the files of the image (OpenFlow with Input).
	Trace string
	// Raw and ELF build the image of a raw trace (intelpt.NewImageFiles:
	// FILE[:OFFSET[-END]]:ADDRESS and FILE[:BASE], later files win).
	Raw, ELF []string
	// Input chooses the stream of a perf.data or capture directory, the
	// process whose mappings make the image and where its files are found.
	Input FlowOptions
	// Timing overrides the timing parameters the input recorded (none for
	// a raw trace).
	Timing intelpt.Timing
	// CPU is the CPU whose errata the decoders work around, "f/m[/s]"
	// (intelpt.ParseCPU); "" or "none": none. A CPU not known starts the
	// listing with ptxed's "[0, 0: config error: unknown cpu]".
	CPU string
	// Flags configure the block decoder (intelpt.FlowFlags: end a block on
	// a call or jump, tick and iflags events, KeepTcalOnOVF).
	Flags intelpt.FlowFlags
	// InsnKeepTcalOnOVF is KeepTcalOnOVF of the instruction decoder
	// (Listing.BlockDecoder false), which ignores the block decoder's
	// Flags.KeepTcalOnOVF, as ptxed's --insn:keep-tcal-on-ovf.
	InsnKeepTcalOnOVF bool
	// Filter holds the address ranges of the filters the trace was
	// recorded with (A, B), FilterCfg their ADDRn_CFG fields
	// (intelpt.AddrFilter.SetCfg): the decoders need them for erratum
	// SKL014.
	Filter    intelpt.AddrFilter
	FilterCfg [4]uint64
	// Listing is what the listing shows (intelpt.FlowListing); its
	// StreamName, StreamCPU and Progress are set by Run.
	Listing intelpt.FlowOptions
}

// FlowTrace is the trace of a FlowJob with its image and configuration,
// ready to be listed (Run). Close it when done.
type FlowTrace struct {
	// Format is the input's format: intelpt.FormatRaw, FormatPerfData or
	// FormatCaptureDir.
	Format string
	// Unfound are the mappings whose files were not found (their code is
	// missing from the image; a perf.data or capture directory only).
	Unfound []intelpt.Unfound

	job       *FlowJob
	cfg       intelpt.FlowConfig
	known     bool                 // the CPU's errata are known (or no CPU was given)
	mapped    *intelpt.MappedTrace // the trace, its pages dropped behind the decoder
	sb        *FlowInput           // a perf.data or capture directory
	inputLoss string               // what the perf.data or capture directory lost
}

// check checks j's options before anything is opened and returns the
// decoder's configuration but its image.
func (j *FlowJob) check() (cfg intelpt.FlowConfig, known bool, err error) {
	cfg.Flags, cfg.Filter, known = j.Flags, j.Filter, true
	if !j.Listing.BlockDecoder {
		cfg.Flags.KeepTcalOnOVF = j.InsnKeepTcalOnOVF
	}
	if j.CPU != "" && j.CPU != "none" {
		cpu, err := intelpt.ParseCPU(j.CPU)
		if err != nil {
			return cfg, false, &FlowArgError{Field: "CPU", Err: err}
		}
		cfg.Errata, known = intelpt.ErrataFor(cpu)
	}
	for n, v := range j.FilterCfg {
		if err := cfg.Filter.SetCfg(n, v); err != nil {
			return cfg, false, &FlowArgError{Field: "FilterCfg", Index: n, Err: err}
		}
	}
	return cfg, known, nil
}

// Open checks j's options (a wrong one is a *FlowArgError), opens the
// trace and builds its image. A raw trace file is mapped (and a stream of
// a perf.data mapped from its file, or from a temporary copy of its
// AUXTRACE records' data): Run drops its pages behind the decoder. Errors
// are OpenFlow's (ErrNoSideband: no Raw nor ELF and no sideband;
// *StreamsError: several streams and none chosen), ErrStdin, and
// those of reading the files; an empty trace is an error naming it
// (intelpt.ErrNoPSB).
func (j *FlowJob) Open() (*FlowTrace, error) {
	cfg, known, err := j.check()
	if err != nil {
		return nil, err
	}
	t := &FlowTrace{Format: intelpt.FormatRaw, job: j, cfg: cfg, known: known}
	var base intelpt.Config
	if len(j.Raw) == 0 && len(j.ELF) == 0 {
		if j.Trace == "-" {
			return nil, ErrStdin
		}
		sb, err := OpenFlow(j.Trace, j.Input)
		if err != nil {
			return nil, err
		}
		if t.mapped, err = sb.Stream.Map(); err != nil {
			sb.Close()
			return nil, fmt.Errorf("%s: %w", j.Trace, err)
		}
		t.sb, t.Format, t.Unfound, t.inputLoss = sb, sb.Format, sb.Unfound, sb.Loss
		base, t.cfg.Image = sb.Config, sb.Image
	} else {
		if t.cfg.Image, err = intelpt.NewImageFiles(j.Raw, j.ELF); err != nil {
			return nil, err
		}
		file, from, size, err := intelpt.SplitFileRange(j.Trace)
		if err != nil {
			return nil, &FlowArgError{Field: "Trace", Err: err}
		}
		if t.mapped, err = intelpt.MapFileRange(file, from, size); err != nil {
			return nil, err
		}
	}
	if len(t.mapped.Data) == 0 {
		t.Close()
		return nil, fmt.Errorf("%s: %w", j.Trace, errEmptyTrace)
	}
	t.cfg.Config = j.Timing.Apply(base)
	if j.CPU != "" && j.CPU != "none" {
		t.cfg.Errata = cfg.Errata // else those the input recorded
	}
	return t, nil
}

// Size is the trace's size in bytes: the offsets Run's progress reaches.
func (t *FlowTrace) Size() int64 { return int64(len(t.mapped.Data)) }

// Run writes the listing of the trace to w (intelpt.FlowListing with the
// job's Listing options): after the input record with Listing.JSON, or
// after ptxed's line for a CPU not known without. progress, when not
// nil, is called with the trace offset reached now and then. The error
// is a write error.
func (t *FlowTrace) Run(w io.Writer, progress func(offset int64)) (intelpt.FlowStats, error) {
	o := t.job.Listing
	if t.sb != nil {
		o.StreamName, o.StreamCPU = t.sb.Stream.Name(), t.sb.Stream.CPU
	}
	o.Progress = func(off int64) {
		t.mapped.DropBefore(off)
		if progress != nil {
			progress(off)
		}
	}
	if o.JSON {
		if _, err := w.Write(intelpt.AppendInputNDJSON(nil, t.job.Trace, t.Format, "")); err != nil {
			return intelpt.FlowStats{}, err
		}
	} else if !t.known {
		if _, err := io.WriteString(w, "[0, 0: config error: unknown cpu]\n"); err != nil {
			return intelpt.FlowStats{}, err
		}
	}
	return intelpt.FlowListing(w, t.mapped.Data, t.cfg, o)
}

// Loss lists what the listing lacks, read from the trace again (the
// dropped pages stay out of memory): the bytes decoding errors skipped,
// the overflows, a tail cut inside a packet (where the listing ends as at
// the trace's end), a file cut shorter while read
// (intelpt.MappedTrace.FlowLoss), then what the perf.data or capture
// directory lost. Empty when nothing was lost.
func (t *FlowTrace) Loss() []string {
	lost := t.mapped.FlowLoss(t.cfg.Config)
	if t.inputLoss != "" {
		lost = append(lost, t.inputLoss)
	}
	return lost
}

// Close releases the trace and the input's files.
func (t *FlowTrace) Close() error {
	err := t.mapped.Close()
	if t.sb != nil {
		if e := t.sb.Close(); err == nil {
			err = e
		}
	}
	return err
}
