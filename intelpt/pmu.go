package intelpt

import (
	"fmt"
	"io/fs"
	"math/bits"
	"sort"
	"strconv"
	"strings"
)

// PMUDir is where Linux describes the intel_pt PMU.
const PMUDir = "/sys/bus/event_source/devices/intel_pt"

// FormatField is one named field of a PMU format: which perf_event_attr
// config word ("config", "config1", "config2") and which bits. A field may
// be split over several bit ranges.
type FormatField struct {
	Word   int      // 0: config, 1: config1, 2: config2
	Ranges [][2]int // inclusive bit ranges, low part first
}

// Width is the number of bits of the field.
func (f FormatField) Width() int {
	n := 0
	for _, r := range f.Ranges {
		n += r[1] - r[0] + 1
	}
	return n
}

// Put stores v into the field within words, or fails if v does not fit.
func (f FormatField) Put(words *[3]uint64, v uint64) error {
	if w := f.Width(); w < 64 && v>>w != 0 {
		return fmt.Errorf("value %d does not fit %d bits", v, w)
	}
	for _, r := range f.Ranges {
		n := r[1] - r[0] + 1
		mask := uint64(1)<<n - 1
		if n == 64 {
			mask = ^uint64(0)
		}
		words[f.Word] = words[f.Word]&^(mask<<r[0]) | (v&mask)<<r[0]
		v >>= n
	}
	return nil
}

// ParseFormat parses a sysfs format string such as "config:0-7",
// "config:14-17" or "config1:0-3,8".
func ParseFormat(s string) (FormatField, error) {
	s = strings.TrimSpace(s)
	name, list, ok := strings.Cut(s, ":")
	var f FormatField
	switch name {
	case "config":
		f.Word = 0
	case "config1":
		f.Word = 1
	case "config2":
		f.Word = 2
	default:
		return f, fmt.Errorf("intelpt: format %q: unknown config word", s)
	}
	if !ok || list == "" {
		return f, fmt.Errorf("intelpt: format %q: no bits", s)
	}
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a > 63 {
			return f, fmt.Errorf("intelpt: format %q: bad bit %q", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b > 63 {
				return f, fmt.Errorf("intelpt: format %q: bad range %q", s, part)
			}
		}
		f.Ranges = append(f.Ranges, [2]int{a, b})
	}
	return f, nil
}

// PMU describes the intel_pt PMU from sysfs.
type PMU struct {
	Type   uint32                 // perf_event_attr.type
	Format map[string]FormatField // format/<name>
	Caps   map[string]uint64      // caps/<name> (hexadecimal in sysfs)
}

// ReadPMU reads type, format/* and caps/* from fsys (rooted at the PMU's
// sysfs directory, e.g. os.DirFS(PMUDir)).
func ReadPMU(fsys fs.FS) (*PMU, error) {
	b, err := fs.ReadFile(fsys, "type")
	if err != nil {
		return nil, fmt.Errorf("intelpt: reading the intel_pt PMU type: %w", err)
	}
	t, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("intelpt: intel_pt PMU type %q: %w", b, err)
	}
	p := &PMU{Type: uint32(t), Format: map[string]FormatField{}, Caps: map[string]uint64{}}
	ents, err := fs.ReadDir(fsys, "format")
	if err != nil {
		return nil, fmt.Errorf("intelpt: reading intel_pt formats: %w", err)
	}
	for _, e := range ents {
		b, err := fs.ReadFile(fsys, "format/"+e.Name())
		if err != nil {
			return nil, err
		}
		f, err := ParseFormat(string(b))
		if err != nil {
			return nil, fmt.Errorf("intelpt: format/%s: %w", e.Name(), err)
		}
		p.Format[e.Name()] = f
	}
	ents, _ = fs.ReadDir(fsys, "caps") // older kernels have no caps
	for _, e := range ents {
		b, err := fs.ReadFile(fsys, "caps/"+e.Name())
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("intelpt: caps/%s %q: %w", e.Name(), b, err)
		}
		p.Caps[e.Name()] = v
	}
	return p, nil
}

// Options are the named intel_pt configuration options. Nil pointers leave
// the kernel's default (the kernel sets branch=1 when no config is given;
// iotap sets branch and tsc unless told otherwise).
type Options struct {
	TSC, MTC, CYC, NoRetComp, Branch, PTW, PwrEvt *bool
	PSBPeriod, MTCPeriod, CycThresh               *uint64
}

// capFor names the capability a boolean option needs, if any.
var capFor = map[string]string{
	"mtc": "mtc", "cyc": "psb_cyc", "ptw": "ptwrite", "pwr_evt": "power_event_trace",
}

// periodCaps names the capability bitmap that lists valid values.
var periodCaps = map[string]string{
	"mtc_period": "mtc_periods", "cyc_thresh": "cycle_thresholds", "psb_period": "psb_periods",
}

// Config encodes opts into perf_event_attr config words using the PMU's
// format, checking its capabilities first. Errors wrap ErrNotSupported when
// the CPU lacks a feature.
func (p *PMU) Config(opts Options) (words [3]uint64, err error) {
	set := func(name string, v uint64) error {
		f, ok := p.Format[name]
		if !ok {
			return fmt.Errorf("intelpt: option %s: %w: the kernel's intel_pt PMU has no format/%s", name, ErrNotSupported, name)
		}
		if c, need := capFor[name]; need && v != 0 {
			if have, ok := p.Caps[c]; ok && have == 0 {
				return fmt.Errorf("intelpt: option %s: %w: this CPU lacks caps/%s", name, ErrNotSupported, c)
			}
		}
		if c, ok := periodCaps[name]; ok {
			if bitmap, ok := p.Caps[c]; ok && (v >= 64 || bitmap&(1<<v) == 0) {
				return fmt.Errorf("intelpt: option %s=%d: %w: valid values are %v (caps/%s)", name, v, ErrNotSupported, bitList(bitmap), c)
			}
		}
		if err := f.Put(&words, v); err != nil {
			return fmt.Errorf("intelpt: option %s: %w", name, err)
		}
		return nil
	}
	bools := []struct {
		name string
		v    *bool
	}{{"tsc", opts.TSC}, {"mtc", opts.MTC}, {"cyc", opts.CYC}, {"noretcomp", opts.NoRetComp},
		{"branch", opts.Branch}, {"ptw", opts.PTW}, {"pwr_evt", opts.PwrEvt}}
	for _, b := range bools {
		if b.v == nil {
			continue
		}
		var v uint64
		if *b.v {
			v = 1
		}
		if err := set(b.name, v); err != nil {
			return words, err
		}
	}
	nums := []struct {
		name string
		v    *uint64
	}{{"psb_period", opts.PSBPeriod}, {"mtc_period", opts.MTCPeriod}, {"cyc_thresh", opts.CycThresh}}
	for _, n := range nums {
		if n.v != nil {
			if err := set(n.name, *n.v); err != nil {
				return words, err
			}
		}
	}
	return words, nil
}

// MTCFreq returns the MTC period encoded in config (for Config.MTCFreq).
func (p *PMU) MTCFreq(config uint64) uint8 {
	f, ok := p.Format["mtc_period"]
	if !ok || f.Word != 0 || len(f.Ranges) != 1 {
		return 0
	}
	r := f.Ranges[0]
	return uint8(config >> r[0] & (1<<(r[1]-r[0]+1) - 1))
}

func bitList(m uint64) []int {
	var l []int
	for m != 0 {
		i := bits.TrailingZeros64(m)
		l = append(l, i)
		m &^= 1 << i
	}
	sort.Ints(l)
	return l
}
