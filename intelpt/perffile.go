package intelpt

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/iotap/iotap/perfdata"
)

// PerfAttr is one event attribute of a perf.data file.
type PerfAttr struct {
	Type        uint32
	Config      uint64
	SampleType  uint64
	Flags       uint64 // the perf_event_attr bit field word (disabled, ..., sample_id_all, mmap2, ...)
	SampleIDAll bool
	IDs         []uint64 // the event IDs of this attribute (one per CPU/thread)
}

// PerfBuildID is an entry of perf's build-id table (the HEADER_BUILD_ID
// feature section that perf record writes for the files hit by samples or
// traced, and HEADER_BUILD_ID records in pipe mode).
type PerfBuildID struct {
	PID      int32
	CPUMode  uint16 // PerfMiscKernel, PerfMiscUser, ...
	BuildID  []byte
	Filename string
}

// Hex returns the build-id in lower-case hex.
func (b *PerfBuildID) Hex() string { return hex.EncodeToString(b.BuildID) }

// perf.data header feature bits (tools/perf/util/header.h).
const perfFeatBuildID = 2

// parseBuildIDs decodes build-id records (HEADER_BUILD_ID layout) in b.
func parseBuildIDs(b []byte, base int64, out []PerfBuildID) ([]PerfBuildID, error) {
	le := binary.LittleEndian
	for off := 0; off < len(b); {
		if len(b)-off < perfEventHeaderSize {
			return out, perfErr(int(base)+off, "truncated build-id record")
		}
		size := int(le.Uint16(b[off+6:]))
		if size < perfEventHeaderSize+4+24 || off+size > len(b) {
			return out, perfErr(int(base)+off, "build-id record size %d out of bounds", size)
		}
		out = append(out, decodeBuildID(b[off:off+size]))
		off += size
	}
	return out, nil
}

func decodeBuildID(rec []byte) PerfBuildID {
	le := binary.LittleEndian
	misc := le.Uint16(rec[4:])
	e := PerfBuildID{PID: int32(le.Uint32(rec[8:])), CPUMode: misc & PerfMiscCPUModeMask}
	id := rec[12:36]
	n := 20
	if misc&(1<<15) != 0 && int(id[20]) <= 20 { // PERF_RECORD_MISC_BUILD_ID_SIZE
		n = int(id[20])
	}
	e.BuildID = id[:n]
	name := rec[36:]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	e.Filename = string(name)
	return e
}

// Sideband is the sideband of a trace: its records in file order, perf's
// build-id table, and what could not be read.
type Sideband struct {
	Records  []SidebandRecord
	BuildIDs []PerfBuildID
	Attrs    []PerfAttr
	// ByType counts the records of each type (perf's names; "type_N" for
	// types this package does not know, which are also in Unknown).
	ByType  map[string]int
	Unknown map[uint32]int
	// Loss the kernel or perf reported: LOST records (their lost counts
	// summed), LOST_SAMPLES, AUX records with the truncated, partial or
	// collision flag.
	LostRecords, LostSamples               uint64
	AuxTruncated, AuxPartial, AuxCollision int
	Samples                                int // SAMPLE records (not sideband; counted)
	// Bad lists records that could not be decoded (skipped, with offset).
	Bad []error
	// Truncated says why the input ended before its end (empty when the
	// input was complete).
	Truncated string
}

// Lossy reports whether any sideband or trace data was lost or unreadable.
func (s *Sideband) Lossy() bool {
	return s.LostRecords+s.LostSamples > 0 || s.AuxTruncated+s.AuxPartial+s.AuxCollision > 0 || len(s.Bad) > 0 || s.Truncated != ""
}

// LossSummary describes the loss in one line ("" when none).
func (s *Sideband) LossSummary() string {
	var parts []string
	if s.Truncated != "" {
		parts = append(parts, s.Truncated)
	}
	if s.LostRecords > 0 {
		parts = append(parts, fmt.Sprintf("%d records lost (PERF_RECORD_LOST)", s.LostRecords))
	}
	if s.LostSamples > 0 {
		parts = append(parts, fmt.Sprintf("%d samples lost", s.LostSamples))
	}
	if n := s.AuxTruncated + s.AuxPartial + s.AuxCollision; n > 0 {
		parts = append(parts, fmt.Sprintf("%d AUX records with lost trace (%d truncated, %d partial, %d collision)", n, s.AuxTruncated, s.AuxPartial, s.AuxCollision))
	}
	if len(s.Bad) > 0 {
		parts = append(parts, fmt.Sprintf("%d malformed records skipped (first: %v)", len(s.Bad), s.Bad[0]))
	}
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += "; "
		}
		out += p
	}
	return out
}

func (s *Sideband) count(r *SidebandRecord) {
	if s.ByType == nil {
		s.ByType, s.Unknown = map[string]int{}, map[uint32]int{}
	}
	if PerfRecordName(r.Type) == "" {
		s.Unknown[r.Type]++
	}
	s.ByType[r.Kind()]++
	switch r.Type {
	case PerfRecordLost:
		s.LostRecords += r.Lost
	case PerfRecordLostSamples:
		s.LostSamples += r.Lost
	case PerfRecordAux:
		if r.AuxFlags&AuxFlagTruncated != 0 {
			s.AuxTruncated++
		}
		if r.AuxFlags&AuxFlagPartial != 0 {
			s.AuxPartial++
		}
		if r.AuxFlags&AuxFlagCollision != 0 {
			s.AuxCollision++
		}
	case PerfRecordSample:
		s.Samples++
	}
}

// cut records why the input ends early (the first reason first).
func (s *Sideband) cut(why string) {
	if s.Truncated == "" {
		s.Truncated = why
	} else {
		s.Truncated += "; then " + why
	}
}

// keep reports whether a record is sideband worth keeping.
func keepSideband(typ uint32) bool {
	switch typ {
	case PerfRecordMmap, PerfRecordMmap2, PerfRecordComm, PerfRecordFork, PerfRecordExit,
		PerfRecordItraceStart, PerfRecordSwitch, PerfRecordSwitchCPUWide, PerfRecordAux,
		PerfRecordLost, PerfRecordLostSamples:
		return true
	}
	return false
}

// sampleIDLayout picks, for each record, the sample_type of its event.
type sampleIDLayout struct {
	one     *PerfAttr
	byID    map[uint64]*PerfAttr
	identOK bool
}

func newSampleIDLayout(attrs []PerfAttr) sampleIDLayout {
	var l sampleIDLayout
	if len(attrs) == 0 {
		return l
	}
	l.one = &attrs[0]
	same, ident := true, true
	for i := range attrs {
		if attrs[i].SampleType&perfSampleIDMask != attrs[0].SampleType&perfSampleIDMask || attrs[i].SampleIDAll != attrs[0].SampleIDAll {
			same = false
		}
		if attrs[i].SampleType&perfSampleIdentifier == 0 {
			ident = false
		}
	}
	if !same && ident {
		l.identOK = true
		l.byID = map[uint64]*PerfAttr{}
		for i := range attrs {
			for _, id := range attrs[i].IDs {
				l.byID[id] = &attrs[i]
			}
		}
	}
	return l
}

// attrFor returns the attribute whose sample_id layout rec uses.
func (l *sampleIDLayout) attrFor(rec []byte) *PerfAttr {
	if l.identOK && len(rec) >= 16 {
		if a := l.byID[binary.LittleEndian.Uint64(rec[len(rec)-8:])]; a != nil {
			return a
		}
	}
	return l.one
}

// PerfSideband reads the sideband of a perf.data file (file or pipe mode,
// perf record -z's compressed records too) held in b: its MMAP/MMAP2,
// COMM, FORK/EXIT, ITRACE_START, SWITCH, AUX and LOST records, in file
// order, and perf's build-id table. A truncated file gives the records
// before the cut and Truncated set; malformed records are skipped and
// listed in Bad. The error is for input that is not a perf.data file at
// all.
func PerfSideband(b []byte) (*Sideband, error) {
	if !IsPerfData(b) || len(b) < perfPipeHeaderSize {
		return nil, perfErr(0, "missing PERFILE2 magic")
	}
	f, err := perfdata.OpenBytes(b)
	if err != nil {
		return nil, fromPerfdata(err)
	}
	return perfSideband(f)
}

// PerfSidebandReaderAt is PerfSideband of the perf.data that ra holds
// (size bytes), read as it comes: the PT data is skipped, not read.
func PerfSidebandReaderAt(ra io.ReaderAt, size int64) (*Sideband, error) {
	head := make([]byte, perfPipeHeaderSize)
	if n, _ := ra.ReadAt(head, 0); n < len(head) || !IsPerfData(head) {
		return nil, perfErr(0, "missing PERFILE2 magic")
	}
	f, err := perfdata.Open(ra, size)
	if err != nil {
		return nil, fromPerfdata(err)
	}
	return perfSideband(f)
}

func perfSideband(f *perfdata.File) (*Sideband, error) {
	s := &Sideband{ByType: map[string]int{}, Unknown: map[uint32]int{}, Truncated: f.Truncated}
	for _, a := range f.Attrs {
		s.Attrs = append(s.Attrs, perfAttr(a))
	}
	layout := newSampleIDLayout(s.Attrs)
	le := binary.LittleEndian
	dataEnd := f.Data.Offset + f.Data.Size
	rd := f.Records()
	defer rd.Close()
	for stop := false; !stop; {
		r, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *perfdata.Error
			if errors.As(err, &pe) {
				s.cut(fmt.Sprintf("offset %#x: %s", pe.Offset, pe.Msg))
			} else {
				s.cut(err.Error())
			}
			break
		}
		rec, off := r.Data, r.Offset
		switch typ := r.Type; {
		case typ == perfRecordHeaderAttr:
			a, err := perfdata.HeaderAttr(rec, off)
			if err != nil {
				s.Bad = append(s.Bad, fromPerfdata(err))
				break
			}
			s.Attrs = append(s.Attrs, perfAttr(a))
			layout = newSampleIDLayout(s.Attrs)
		case typ == perfRecordAuxtrace:
			if r.PayloadSize > dataEnd-r.PayloadOffset {
				s.cut(fmt.Sprintf("offset %#x: AUXTRACE data of %d bytes runs past the end of the data: file truncated", off, r.PayloadSize))
				stop = true
			}
		case typ == 67: // HEADER_BUILD_ID (pipe mode)
			if len(rec) >= perfEventHeaderSize+4+24 {
				s.BuildIDs = append(s.BuildIDs, decodeBuildID(rec))
			}
		case typ == perfdata.RecordHeaderFeature: // pipe mode: feature id, then the section
			if len(rec) >= 16 && le.Uint64(rec[8:]) == perfFeatBuildID {
				var err error
				if s.BuildIDs, err = parseBuildIDs(rec[16:], off+16, s.BuildIDs); err != nil {
					s.Bad = append(s.Bad, err)
				}
			}
		}
		var sr SidebandRecord
		at := layout.attrFor(rec)
		var st uint64
		all := false
		if at != nil {
			st, all = at.SampleType, at.SampleIDAll
		}
		if err := DecodeSidebandRecord(rec, off, st, all, &sr); err != nil {
			s.Bad = append(s.Bad, err)
		} else {
			s.count(&sr)
			if keepSideband(sr.Type) {
				s.Records = append(s.Records, sr)
			}
		}
	}
	if sec, ok := f.Sections[perfFeatBuildID]; ok {
		b, _, err := f.Section(perfFeatBuildID)
		if err == nil {
			s.BuildIDs, err = parseBuildIDs(b, sec.Offset, s.BuildIDs)
		}
		if err != nil {
			s.Bad = append(s.Bad, err)
		}
	}
	return s, nil
}

// perfAttr is a perfdata attribute as this package's.
func perfAttr(a perfdata.Attr) PerfAttr {
	return PerfAttr{Type: a.Type, Config: a.Config, SampleType: a.SampleType, Flags: a.Flags, SampleIDAll: a.SampleIDAll(), IDs: a.IDs}
}

func recName(typ uint32) string {
	if n := PerfRecordName(typ); n != "" {
		return n
	}
	return fmt.Sprintf("type_%d", typ)
}

// RawSideband reads kernel sideband records as `iotap pt capture` stores
// them (cpuN.sideband: the records of the perf ring, unwrapped) with the
// events' sample_type and sample_id_all (capture.json).
func RawSideband(b []byte, sampleType uint64, sampleIDAll bool) *Sideband {
	s := &Sideband{ByType: map[string]int{}, Unknown: map[uint32]int{}}
	le := binary.LittleEndian
	off := 0
	for off < len(b) {
		if len(b)-off < perfEventHeaderSize {
			s.Truncated = fmt.Sprintf("offset %#x: %d bytes left, shorter than a record header (file truncated)", off, len(b)-off)
			break
		}
		size := int(le.Uint16(b[off+6:]))
		if size < perfEventHeaderSize || off+size > len(b) {
			s.Truncated = fmt.Sprintf("offset %#x: %s record of %d bytes does not fit the %d bytes left (file truncated or corrupt)", off, recName(le.Uint32(b[off:])), size, len(b)-off)
			break
		}
		var r SidebandRecord
		if err := DecodeSidebandRecord(b[off:off+size], int64(off), sampleType, sampleIDAll, &r); err != nil {
			s.Bad = append(s.Bad, err)
		} else {
			s.count(&r)
			if keepSideband(r.Type) {
				s.Records = append(s.Records, r)
			}
		}
		off += size
	}
	return s
}

// Merge appends the records of o (another CPU's sideband) and keeps all
// records in time order (stable: records without time keep their order).
func (s *Sideband) Merge(o *Sideband) {
	s.Records = append(s.Records, o.Records...)
	s.BuildIDs = append(s.BuildIDs, o.BuildIDs...)
	if s.ByType == nil {
		s.ByType, s.Unknown = map[string]int{}, map[uint32]int{}
	}
	for k, v := range o.ByType {
		s.ByType[k] += v
	}
	for k, v := range o.Unknown {
		s.Unknown[k] += v
	}
	s.LostRecords += o.LostRecords
	s.LostSamples += o.LostSamples
	s.AuxTruncated += o.AuxTruncated
	s.AuxPartial += o.AuxPartial
	s.AuxCollision += o.AuxCollision
	s.Samples += o.Samples
	s.Bad = append(s.Bad, o.Bad...)
	if s.Truncated == "" {
		s.Truncated = o.Truncated
	}
	sort.SliceStable(s.Records, func(i, j int) bool { return s.Records[i].Time < s.Records[j].Time })
}
