package calls

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/symtab"
)

// Options of an analysis.
type Options struct {
	Finder   symtab.Finder
	Demangle bool
	// PID keeps only the threads of this process (0: all).
	PID int32
	// TreeDepth bounds the call tree's depth (Tracker.TreeDepth).
	TreeDepth int
	// NoTree builds no call tree (Result.Tree is nil), for a caller that
	// uses only OnBegin and OnCall: the tree grows with the distinct call
	// paths of the trace, which a long trace of varied code keeps adding.
	NoTree bool
	// Resolution keeps only calls at least this long (0: all), in the
	// unit of Input.ToNS (ns) or, without it, in TSC ticks: shorter calls
	// are not reported nor counted in the tree, their instructions and
	// time are their caller's own (Tracker.Keep).
	Resolution uint64
	// OnBegin receives each call as it begins (End, EndInsn and the
	// counts are not known yet); OnCall each call as it ends (callees
	// first); OnGap each gap. Within one stream the times they see never
	// go back.
	OnBegin func(*Call)
	OnCall  func(*Call)
	OnGap   func(*Gap)
	// Streams selects the streams of the input to decode (nil: all).
	Streams []int
	// Kernel, when set, is the kernel's code, mapped into every process
	// (kernel-mode parts of the trace decode through it); KernelSymbols
	// names it (NewKernelSymbols).
	Kernel        *intelpt.KernelImage
	KernelSymbols *KernelSymbols
	// Image, when set, is the memory of every thread (raw code given by
	// the caller) instead of the files of the sideband's mappings.
	Image *intelpt.Image
	// Progress, when set, is called now and then with the bytes of trace
	// decoded so far, over the streams in their order (a stream left out
	// by PID or Streams counts as done), for a progress line.
	Progress func(done int64)
}

// Input is a trace with its sideband: a perf.data file or an iotap
// capture directory, read by ReadPerfData or ReadCaptureDir.
type Input struct {
	Streams  []intelpt.PerfStream
	Sideband *intelpt.Sideband
	Config   intelpt.Config
	// ToNS converts TSC to the sideband's time (nil: no conversion known).
	ToNS func(uint64) uint64
	// Loss describes trace or sideband loss ("" when none).
	Loss string
	// Format is the input's kind (intelpt.FormatPerfData,
	// FormatCaptureDir, FormatRaw), set by Open and RawInput.
	Format string
	// BuildIDDirs are the input's own build-id directories (a capture
	// directory's binaries/), searched first by Input.Finder.
	BuildIDDirs []string

	mapped *intelpt.MappedTrace  // a raw trace file's mapping (Job.Open)
	perf   *intelpt.PerfDataFile // the perf.data the streams are read from (ReadPerfDataFile)
	closer io.Closer             // what ReadPerfDataReaderAt's streams are read from
}

// Close releases what the input's streams are read from: the mapping of
// a raw trace file that Job.Open made, the perf.data file of
// ReadPerfDataFile, the trace files of ReadCaptureDir; in's streams must
// not be used after it.
func (in *Input) Close() error {
	var err error
	if in.mapped != nil {
		err = in.mapped.Close()
	}
	if in.perf != nil {
		if e := in.perf.Close(); err == nil {
			err = e
		}
	}
	if in.closer != nil {
		if e := in.closer.Close(); err == nil {
			err = e
		}
		in.closer = nil
	}
	for i := range in.Streams {
		if e := in.Streams[i].Close(); err == nil {
			err = e
		}
	}
	return err
}

// ReadPerfData reads the PT streams and sideband of a perf.data file.
func ReadPerfData(b []byte) (*Input, error) {
	pt, err := intelpt.PerfDataPTTruncated(b)
	if err != nil {
		return nil, err
	}
	sb, err := intelpt.PerfSideband(b)
	if err != nil {
		return nil, err
	}
	in := &Input{Streams: pt.Streams, Sideband: sb, Config: pt.Config, Loss: sb.LossSummary()}
	if pt.TimeConv != nil {
		in.ToNS = pt.TimeConv.ToNS
	}
	return in, nil
}

// ReadPerfDataFile is ReadPerfData of the perf.data file path, whose PT
// streams are not read: Analyze reads each from the file as it decodes
// it (intelpt.OpenPerfDataFile, PerfStream.Map), so that its memory does
// not grow with the trace. Close the input when done.
func ReadPerfDataFile(path string) (*Input, error) {
	pf, err := intelpt.OpenPerfDataFile(path)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		pf.Close()
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		pf.Close()
		return nil, err
	}
	sb, err := intelpt.PerfSidebandReaderAt(f, st.Size())
	f.Close()
	if err != nil {
		pf.Close()
		return nil, err
	}
	pt := pf.PerfTrace
	in := &Input{Streams: pt.Streams, Sideband: sb, Config: pt.Config, Loss: sb.LossSummary(), perf: pf}
	if pt.TimeConv != nil {
		in.ToNS = pt.TimeConv.ToNS
	}
	return in, nil
}

// ReadPerfDataReaderAt is ReadPerfDataFile of the perf.data that ra
// holds (size bytes; a temporary copy of standard input, say): the PT
// streams are read from ra as Analyze decodes them. ra must stay readable
// and unchanged until the input is closed; Close closes c (nil: nothing).
func ReadPerfDataReaderAt(ra io.ReaderAt, size int64, c io.Closer) (*Input, error) {
	pt, err := intelpt.OpenPerfDataPT(ra, size)
	if err != nil {
		return nil, err
	}
	sb, err := intelpt.PerfSidebandReaderAt(ra, size)
	if err != nil {
		return nil, err
	}
	in := &Input{Streams: pt.Streams, Sideband: sb, Config: pt.Config, Loss: sb.LossSummary(), closer: c}
	if pt.TimeConv != nil {
		in.ToNS = pt.TimeConv.ToNS
	}
	return in, nil
}

// ReadCaptureDir reads the sideband of an `iotap pt capture` directory
// (capture.json, cpuN.sideband) and opens its trace files (cpuN.pt),
// which Analyze reads as it decodes them (intelpt.RawFileStream): Close
// the input when done.
func ReadCaptureDir(dir string) (*Input, error) {
	ci, err := intelpt.ReadCaptureInfo(dir)
	if err != nil {
		return nil, err
	}
	in := &Input{Config: ci.DecoderConfig(), Sideband: &intelpt.Sideband{}}
	if ci.TSC != nil {
		in.ToNS = ci.TSC.ToNS
	}
	for _, b := range ci.Buffers {
		tid := int32(-1)
		if b.CPU < 0 {
			tid = int32(ci.PID)
		}
		s, err := intelpt.RawFileStream(filepath.Join(dir, b.File), int32(b.CPU), tid)
		if err != nil {
			in.Close()
			return nil, err
		}
		in.Streams = append(in.Streams, s)
		if b.Sideband != "" {
			raw, err := os.ReadFile(filepath.Join(dir, b.Sideband))
			if err != nil {
				in.Close()
				return nil, err
			}
			// capture sets sample_id_all with TID|TIME|CPU (SampleType)
			in.Sideband.Merge(intelpt.RawSideband(raw, ci.SampleType, true))
		}
	}
	files, err := intelpt.ReadMappedFiles(dir)
	if err != nil {
		in.Close()
		return nil, err
	}
	in.Sideband.BuildIDs = append(in.Sideband.BuildIDs, intelpt.BuildIDTable(files)...)
	in.Loss = in.Sideband.LossSummary()
	if ci.Lost && in.Loss == "" {
		in.Loss = "capture.json says trace was lost"
	}
	return in, nil
}

// Result is what an analysis found.
type Result struct {
	Tree  *Node
	Stats Stats
	// Unfound lists mappings whose files could not be loaded (their code
	// shows as gaps).
	Unfound []intelpt.Unfound
	// Threads decoded, by stream.
	Threads []int32
	Gaps    int
	// FirstGaps are the first MaxGapNotes gaps (Notes lists them).
	FirstGaps []Gap
	// Overlaps say which mappings replaced parts of earlier ones (the
	// first few; AddressSpaces.OverlapNotes).
	Overlaps []string
	// Cut lists the streams that end inside a packet, where the decoder
	// stops as at a trace's end: "NAME: trace ends inside a packet at
	// offset 0xOFF (last N bytes)", found where the decoder stopped (the
	// stream is read once). Loss reports them. (A file cut shorter while
	// it is decoded is an error: mapfile.Do.)
	Cut []string
}

// switchTable tells which thread ran on a CPU from a time on (perf
// time, increasing).
type switchTable struct {
	t   []uint64
	tid []int32
	pid []int32
}

func (s *switchTable) Len() int           { return len(s.t) }
func (s *switchTable) Less(i, j int) bool { return s.t[i] < s.t[j] }
func (s *switchTable) Swap(i, j int) {
	s.t[i], s.t[j] = s.t[j], s.t[i]
	s.tid[i], s.tid[j] = s.tid[j], s.tid[i]
	s.pid[i], s.pid[j] = s.pid[j], s.pid[i]
}

// Analyze rebuilds the calls of every thread of in.
func Analyze(in *Input, o Options) (*Result, error) {
	as := in.Sideband.AddressSpaces()
	res := &Result{Overlaps: as.OverlapNotes}
	tr := NewTracker(o.OnCall)
	tr.OnBegin = o.OnBegin
	tr.TreeDepth = o.TreeDepth
	if o.NoTree {
		tr.Tree = nil
	}
	if min := o.Resolution; min > 0 {
		toNS := in.ToNS
		if toNS == nil {
			toNS = func(t uint64) uint64 { return t }
		}
		tr.Keep = func(begin, end uint64) bool { return end >= begin && toNS(end)-toNS(begin) >= min }
	}
	tr.OnGap = func(g *Gap) {
		res.Gaps++
		if len(res.FirstGaps) < MaxGapNotes {
			res.FirstGaps = append(res.FirstGaps, *g)
		}
		if o.OnGap != nil {
			o.OnGap(g)
		}
	}
	type procImage struct {
		im  *intelpt.Image
		sym *ProcSymbolizer
	}
	images := map[int32]*procImage{}
	image := func(pid int32) *procImage {
		if pi, ok := images[pid]; ok {
			return pi
		}
		p := as.Process(pid)
		if p == nil {
			p = &intelpt.Process{PID: pid}
		}
		var im *intelpt.Image
		var paths map[string]string
		if o.Image != nil {
			im = o.Image
		} else {
			var unfound []intelpt.Unfound
			im, unfound, paths = p.LoadImage(&o.Finder)
			res.Unfound = append(res.Unfound, unfound...)
			if o.Kernel != nil {
				o.Kernel.AddTo(im)
			}
		}
		pi := &procImage{im: im, sym: NewProcSymbolizer(p, paths, symtab.Options{Demangle: o.Demangle})}
		pi.sym.Kernel = o.KernelSymbols
		images[pid] = pi
		return pi
	}
	seen := map[int32]bool{}
	startThread := func(pid, tid int32) {
		tr.Thread(tid, image(pid).sym)
		if seen[tid] {
			return
		}
		seen[tid] = true
		if p := as.Process(pid); p != nil && p.Comm != "" {
			tr.SetThreadName(tid, p.Comm+" "+strconv.Itoa(int(tid)))
		}
		res.Threads = append(res.Threads, tid)
	}
	// PID of each thread (sideband).
	pidOf := map[int32]int32{}
	for _, r := range in.Sideband.Records {
		if r.TID > 0 && r.PID > 0 {
			pidOf[r.TID] = r.PID
		}
	}
	var base int64               // bytes of the streams before this one
	var cur *intelpt.MappedTrace // the stream being decoded, mapped by Analyze
	defer func() {
		if cur != nil {
			cur.Close()
		}
	}()
	// cut notes that stream s ends inside the packet at offset at (-1:
	// it does not), as the decoder found where it stopped (decode).
	cut := func(s *intelpt.PerfStream, trace []byte, at int64) {
		if at >= 0 {
			res.Cut = append(res.Cut, fmt.Sprintf("%s: trace ends inside a packet at offset %#x (last %d bytes)", s.Name(), at, int64(len(trace))-at))
		}
	}
	for i, s := range in.Streams {
		var progress func(off int64)
		if o.Progress != nil {
			b := base
			progress = func(off int64) { o.Progress(b + off) }
			o.Progress(base)
		}
		mapped := in.mapped
		if mapped == nil || len(in.Streams) != 1 {
			mapped = nil
		}
		base += s.Len()
		if o.Streams != nil && !containsInt(o.Streams, i) {
			continue
		}
		if cur != nil {
			cur.Close()
			cur = nil
		}
		// traceOf gives the stream to decode, mapped when it is read
		// from its file (or copied to a temporary file and mapped), its
		// pages dropped behind the decoder; never held.
		traceOf := func() ([]byte, error) {
			if mapped == nil {
				m, err := s.Map()
				if err != nil {
					return nil, fmt.Errorf("calls: %s: %w", s.Name(), err)
				}
				cur, mapped = m, m
			}
			if show := progress; mapped.Mapped() {
				progress = func(off int64) {
					mapped.DropBefore(off)
					if show != nil {
						show(off)
					}
				}
			}
			return mapped.Data, nil
		}
		if s.CPU < 0 || s.TID > 0 { // per-thread stream
			tid := s.TID
			pid := pidOf[tid]
			if pid == 0 {
				pid = tid
			}
			if o.PID != 0 && pid != o.PID {
				continue
			}
			pi := image(pid)
			startThread(pid, tid)
			trace, err := traceOf()
			if err != nil {
				return nil, err
			}
			at, err := decode(trace, intelpt.FlowConfig{Config: in.Config, Image: pi.im}, tr, nil, progress)
			if err != nil {
				return nil, err
			}
			cut(&s, trace, at)
			continue
		}
		// Per-CPU stream: the sideband's context switches on this CPU say
		// which thread runs; each thread gets its own stack. The image is
		// the current process's.
		var sw switchTable
		for _, r := range in.Sideband.Records {
			if r.CPU != s.CPU || !r.HasTime {
				continue
			}
			switch {
			case r.Type == intelpt.PerfRecordSwitch && !r.SwitchOut(), r.Type == intelpt.PerfRecordItraceStart:
				sw.t, sw.pid, sw.tid = append(sw.t, r.Time), append(sw.pid, r.PID), append(sw.tid, r.TID)
			case r.Type == intelpt.PerfRecordSwitchCPUWide && r.SwitchOut():
				sw.t, sw.pid, sw.tid = append(sw.t, r.Time), append(sw.pid, r.NextPrevPID), append(sw.tid, r.NextPrevTID)
			}
		}
		sort.Stable(&sw)
		if len(sw.t) == 0 {
			return nil, fmt.Errorf("calls: the per-CPU trace of cpu %d has no context switch records: cannot tell its threads apart", s.CPU)
		}
		// The decoder reads code from the image of the process that runs,
		// switched when a switch record's time is reached (before each
		// block and at each enable, so that in a user-only trace the
		// process is the new one when tracing resumes after the switch).
		curTID, cur := int32(-2), -2
		var curImage *intelpt.Image
		next := uint64(0) // time of the switch after cur (^0: none)
		sel := func(tsc uint64) *intelpt.Image {
			ns := tsc
			if in.ToNS != nil {
				ns = in.ToNS(tsc)
			}
			if cur >= -1 && ns < next && (cur < 0 || ns >= sw.t[cur]) {
				return nil // the same slot as before
			}
			cur = sort.Search(len(sw.t), func(i int) bool { return sw.t[i] > ns }) - 1
			next = ^uint64(0)
			if cur+1 < len(sw.t) {
				next = sw.t[cur+1]
			}
			if cur < 0 {
				return nil
			}
			pid, tid := sw.pid[cur], sw.tid[cur]
			pi := image(pid)
			var im *intelpt.Image
			if pi.im != curImage {
				curImage, im = pi.im, pi.im
			}
			if tid == curTID {
				return im
			}
			curTID = tid
			if o.PID != 0 && pid != o.PID {
				tr.cur = nil
				return im
			}
			startThread(pid, tid)
			return im
		}
		pid0 := sw.pid[0]
		cfgImage := image(pid0).im
		curImage = cfgImage
		trace, err := traceOf()
		if err != nil {
			return nil, err
		}
		at, err := decode(trace, intelpt.FlowConfig{Config: in.Config, Image: cfgImage}, tr, sel, progress)
		if err != nil {
			return nil, err
		}
		cut(&s, trace, at)
	}
	var last uint64
	tr.Finish(last)
	res.Tree, res.Stats = tr.Tree, tr.Stats
	return res, nil
}

// Finder returns a file finder for a sysroot and build-id cache
// directories.
func Finder(sysroot string, buildIDDirs []string) symtab.Finder {
	return symtab.Finder{Sysroot: sysroot, BuildIDDirs: buildIDDirs}
}

func containsInt(a []int, v int) bool {
	for _, x := range a {
		if x == v {
			return true
		}
	}
	return false
}

// RawInput is a single raw PT stream of one thread (no sideband): decode
// it with Options.Image.
func RawInput(trace []byte, cfg intelpt.Config) *Input {
	return &Input{Streams: []intelpt.PerfStream{{CPU: -1, TID: 1, Data: trace}}, Sideband: &intelpt.Sideband{}, Config: cfg, Format: intelpt.FormatRaw}
}
