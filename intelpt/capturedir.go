package intelpt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/iotap/iotap/internal/outfile"
)

// A capture directory is what 'iotap pt capture' writes, and what a
// library user writes with WriteCaptureInfo after draining a Trace:
//
//	cpuN.pt         raw PT of CPU N ("thread.pt" in per-thread mode),
//	                BufferFileName; 'iotap pt dump' reads it
//	cpuN.sideband   the perf records of the buffer's sideband ring (mmap2,
//	                comm, itrace_start, context switches, aux), ending
//	                with the sample_id fields of CaptureInfo.SampleType
//	capture.json    CaptureInfo: configuration, PMU type, config words,
//	                timing (MTC frequency, CPUID 0x15, TSC conversion),
//	                per-buffer info, sideband counts, loss
//
// Files are created with mode 0600. The JSON fields below are the schema;
// new fields are only ever added (with omitempty), so that older readers
// keep working.

// CaptureInfoFile is the name of the sidecar of a capture directory.
const CaptureInfoFile = "capture.json"

// CaptureInfo is the sidecar of a capture directory (capture.json).
type CaptureInfo struct {
	Tool       string    `json:"tool"`
	Mode       string    `json:"mode"` // Mode.String: "per-cpu" or "per-thread"
	CPUs       []int     `json:"cpus,omitempty"`
	PID        int       `json:"pid,omitempty"`
	Command    []string  `json:"command,omitempty"`
	Chunks     int       `json:"chunks"`
	Order      uint      `json:"order"`
	Circular   bool      `json:"circular"`
	PMUType    uint32    `json:"pmu_type"`
	Config     [3]uint64 `json:"config"` // perf_event_attr config, config1, config2
	MTCFreq    uint8     `json:"mtc_freq"`
	CPUID15EAX uint32    `json:"cpuid_0x15_eax,omitempty"` // TSC/crystal ratio denominator
	CPUID15EBX uint32    `json:"cpuid_0x15_ebx,omitempty"` // TSC/crystal ratio numerator
	NomFreq    uint8     `json:"nom_freq,omitempty"`       // nominal core:bus ratio
	SampleType uint64    `json:"sample_type"`              // perf sample_type: the sample_id fields ending each sideband record
	Filters    []string  `json:"filters,omitempty"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	// Buffers describes each trace file.
	Buffers []CaptureBuffer `json:"buffers"`
	// Lost is true when the kernel reported lost trace (SidebandStats.Lossy).
	Lost bool `json:"lost"`
	// TSC converts the trace's TSC values to perf time (the kernel's
	// sched clock, ns), from the perf_event_mmap_page of the first buffer;
	// absent when the kernel does not offer it (cap_user_time_zero).
	TSC *TSCConversion `json:"tsc,omitempty"`
}

// CaptureBuffer is one buffer of a capture directory.
type CaptureBuffer struct {
	CPU      int           `json:"cpu"` // -1 in per-thread mode
	File     string        `json:"file"`
	Sideband string        `json:"sideband_file"`
	Bytes    int64         `json:"bytes"`
	Info     BufferInfo    `json:"info"`
	SB       SidebandStats `json:"sideband"`
}

// TSCConversion is perf's TSC to time conversion (perf_event_mmap_page):
// ns = Zero + (tsc * Mult) >> Shift, computed without overflow. With
// Short (cap_user_time_short) the TSC is first taken as
// Cycles + ((tsc - Cycles) & Mask). A perf.data file's
// PERF_RECORD_TIME_CONV holds the same.
type TSCConversion struct {
	Zero   uint64 `json:"time_zero"`
	Mult   uint32 `json:"time_mult"`
	Shift  uint16 `json:"time_shift"`
	Cycles uint64 `json:"time_cycles,omitempty"`
	Mask   uint64 `json:"time_mask,omitempty"`
	Short  bool   `json:"cap_user_time_short,omitempty"`
}

// ToNS converts a TSC value to nanoseconds (nil: the value itself).
func (c *TSCConversion) ToNS(tsc uint64) uint64 {
	if c == nil || c.Shift > 63 {
		return tsc
	}
	if c.Short {
		tsc = c.Cycles + ((tsc - c.Cycles) & c.Mask)
	}
	quot := tsc >> c.Shift
	rem := tsc & (1<<c.Shift - 1)
	return c.Zero + quot*uint64(c.Mult) + (rem*uint64(c.Mult))>>c.Shift
}

// BufferFileName is the base name of a buffer's files in a capture
// directory ("cpu3", or "thread" for cpu -1): NAME.pt and NAME.sideband.
func BufferFileName(cpu int) string {
	if cpu < 0 {
		return "thread"
	}
	return fmt.Sprintf("cpu%d", cpu)
}

// EncodeCaptureInfo writes ci as capture.json's indented JSON.
func EncodeCaptureInfo(w io.Writer, ci *CaptureInfo) error {
	j, err := json.MarshalIndent(ci, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(j, '\n'))
	return err
}

// WriteCaptureInfo writes dir/capture.json (mode 0600, through a
// temporary file, never through a symbolic link).
func WriteCaptureInfo(dir string, ci *CaptureInfo) error {
	var b bytes.Buffer
	if err := EncodeCaptureInfo(&b, ci); err != nil {
		return err
	}
	return outfile.WriteFile(filepath.Join(dir, CaptureInfoFile), b.Bytes(), outfile.Options{})
}

// ReadCaptureInfo reads the capture.json of a capture directory.
func ReadCaptureInfo(dir string) (*CaptureInfo, error) {
	f, err := os.Open(filepath.Join(dir, CaptureInfoFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return DecodeCaptureInfo(f)
}

// DecodeCaptureInfo parses capture.json (at most 16 MiB).
func DecodeCaptureInfo(r io.Reader) (*CaptureInfo, error) {
	var ci CaptureInfo
	dec := json.NewDecoder(io.LimitReader(r, 16<<20))
	if err := dec.Decode(&ci); err != nil {
		return nil, fmt.Errorf("intelpt: %s: %w", CaptureInfoFile, err)
	}
	if ci.TSC != nil && ci.TSC.Shift > 63 {
		return nil, fmt.Errorf("intelpt: %s: tsc time_shift %d > 63", CaptureInfoFile, ci.TSC.Shift)
	}
	return &ci, nil
}

// CaptureInfoOf returns the capture.json of the capture directory that
// holds the trace file at path, and the file's buffer, when path is one of
// the buffers an iotap capture wrote ("-" and other files: false).
func CaptureInfoOf(path string) (*CaptureInfo, *CaptureBuffer, bool) {
	if path == "-" {
		return nil, nil, false
	}
	ci, err := ReadCaptureInfo(filepath.Dir(path))
	if err != nil || ci.Tool != "iotap" {
		return nil, nil, false
	}
	for i := range ci.Buffers {
		if ci.Buffers[i].File == filepath.Base(path) {
			return ci, &ci.Buffers[i], true
		}
	}
	return nil, nil, false
}

// ConfigOf returns the timing parameters (DecoderConfig) that 'iotap pt
// capture' recorded in capture.json for the buffer file at path; false
// when path is not one of its buffers.
func ConfigOf(path string) (Config, bool) {
	ci, _, ok := CaptureInfoOf(path)
	if !ok {
		return Config{}, false
	}
	return ci.DecoderConfig(), true
}

// DecoderConfig returns the timing parameters of the capture for
// NewDecoder (MTC frequency, CPUID 0x15, nominal frequency).
func (ci *CaptureInfo) DecoderConfig() Config {
	return Config{MTCFreq: ci.MTCFreq, CPUID15EAX: ci.CPUID15EAX, CPUID15EBX: ci.CPUID15EBX, NomFreq: ci.NomFreq}
}
