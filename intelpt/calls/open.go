package calls

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/symtab"
)

// Open reads the sideband at path and opens its trace: an 'iotap pt
// capture' directory (ReadCaptureDir), else a perf.data file
// (ReadPerfDataFile); the streams are read as they are decoded: Close
// the input when done. The
// Input says which (Format) and where a capture keeps its own binaries
// (BuildIDDirs).
func Open(path string) (*Input, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		in, err := ReadCaptureDir(path)
		if err != nil {
			return nil, err
		}
		in.Format = intelpt.FormatCaptureDir
		in.BuildIDDirs = []string{filepath.Join(path, intelpt.BinariesDir)}
		return in, nil
	}
	in, err := ReadPerfDataFile(path)
	if err != nil {
		return nil, err
	}
	in.Format = intelpt.FormatPerfData
	return in, nil
}

// Finder returns the finder of the files the input's sideband maps: by
// path under sysroot ("" for /), then by build-id in the input's own
// binaries (BuildIDDirs) and in buildIDDirs, perf's build-id cache
// ~/.debug when buildIDDirs is empty (BuildIDDirs).
func (in *Input) Finder(sysroot string, buildIDDirs []string) symtab.Finder {
	return Finder(sysroot, BuildIDDirs(in.BuildIDDirs, buildIDDirs))
}

// BuildIDDirs is the one list of build-id directories every command
// searches for the traced programs' files: own (an input's binaries/,
// Input.BuildIDDirs) first, then dirs (--buildid-dir) or, when dirs is
// empty, perf's build-id cache ~/.debug.
func BuildIDDirs(own, dirs []string) []string {
	all := append(slices.Clone(own), dirs...)
	if len(dirs) == 0 {
		if home, err := os.UserHomeDir(); err == nil {
			all = append(all, filepath.Join(home, ".debug"))
		}
	}
	return all
}

// MaxGapNotes is how many gaps Result.FirstGaps keeps.
const MaxGapNotes = 10

// Notes are what a user should know about the analysis besides the
// calls, one line each: the mappings whose files were not found (their
// code is a gap), the first gaps (MaxGapNotes), mappings that replaced
// parts of earlier ones, and the sideband records skipped (of an unknown
// type, or undecodable).
func (r *Result) Notes(in *Input) []string {
	var n []string
	for _, u := range r.Unfound {
		n = append(n, fmt.Sprintf("mapping %s not decoded: %v", u.Mapping.String(), u.Err))
	}
	for _, g := range r.FirstGaps {
		n = append(n, fmt.Sprintf("gap: thread %d at instruction %d: %s", g.Thread, g.Insn, g.Reason))
	}
	for _, o := range r.Overlaps {
		n = append(n, fmt.Sprintf("overlapping mapping: %s (the later one is used)", o))
	}
	if sb := in.Sideband; sb != nil {
		types := make([]uint32, 0, len(sb.Unknown))
		for t := range sb.Unknown {
			types = append(types, t)
		}
		slices.Sort(types)
		for _, t := range types {
			n = append(n, fmt.Sprintf("sideband: %d record(s) of unknown type %d skipped", sb.Unknown[t], t))
		}
		for _, b := range sb.Bad {
			n = append(n, fmt.Sprintf("sideband: %v", b))
		}
	}
	return n
}

// String summarises the analysis: threads, instructions and the calls,
// returns and gaps the tracker counted.
func (r *Result) String() string {
	return fmt.Sprintf("%d threads, %d instructions, %d calls, %d tail calls, %d returns, %d unwinds, %d unmatched returns, %d gaps",
		len(r.Threads), r.Stats.Insns, r.Stats.Calls, r.Stats.TailCalls, r.Stats.Returns, r.Stats.Unwinds, r.Stats.UnmatchedReturns, r.Gaps)
}
