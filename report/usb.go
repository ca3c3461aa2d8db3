package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

// USB is the summary of one usbmon capture.
type USB struct {
	Stats *usb.Stats
	Pairs usb.PairCounts
	IDs   *usb.Identities
	// Endpoints holds the per-endpoint time series and latency
	// histograms, in the order of Stats.Endpoints.
	Endpoints []*USBEndpoint
	// Loss describes dropped, truncated or skipped data, "" when none.
	Loss string
}

// USBEndpoint is what the report plots for one endpoint.
type USBEndpoint struct {
	Bus      uint16
	Device   uint8
	Endpoint uint8 // with the direction bit
	// Bytes moved by successful completions over time.
	Bytes Series
	// Errors, stalls and cancellations over time.
	Errors Series
	// Latency of paired transfers (µs), log-binned for plotting.
	Latency LogHist
}

// Name is "BUS:DEV ep 81 in".
func (e *USBEndpoint) Name() string {
	return fmt.Sprintf("%d:%03d ep %02x %s", e.Bus, e.Device, e.Endpoint, usb.DirectionName(e.Endpoint&0x80 != 0))
}

type epKey struct {
	bus uint16
	dev uint8
	ep  uint8
}

// usbClock turns event timestamps into nanoseconds on the capture's clock
// as the timeline does: the wall clock, or the text API's microseconds
// unwrapped past 4096 s.
type usbClock struct {
	wraps int64
	last  int64
	init  bool
}

const textWrapUS = 4096 * 1000000

func (c *usbClock) ns(ev *usbmon.Event) int64 {
	if ev.Fields&usbmon.HasWallClock != 0 {
		return usb.Micros(ev) * 1000
	}
	t := usb.Micros(ev)
	if c.init && t+c.wraps*textWrapUS < c.last-textWrapUS/2 {
		c.wraps++
	}
	c.init = true
	t += c.wraps * textWrapUS
	c.last = t
	return t * 1000
}

// AnalyzeUSB reads a usbmon capture (text, binary, pcap or pcapng) and
// summarises it. Loss (truncation, dropped events) is reported in
// USB.Loss, not as an error.
func AnalyzeUSB(ctx context.Context, r io.Reader) (*USB, *Span, error) {
	rd, _, err := usbmon.NewReader(r)
	if err != nil {
		return nil, nil, err
	}
	u := &USB{Stats: usb.NewStats(), IDs: usb.NewIdentities()}
	pairer := usb.NewPairer()
	eps := map[epKey]*USBEndpoint{}
	span := &Span{}
	var clk usbClock
	var ev usbmon.Event
	var readErr error
	for n := 0; ; n++ {
		if n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		err := rd.ReadInto(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		t := clk.ns(&ev)
		span.add(t)
		p, ok := pairer.Add(&ev)
		u.IDs.Learn(&ev, p, ok)
		u.Stats.Record(&ev, p, ok)
		addr := ev.Endpoint
		if ev.In {
			addr |= 0x80
		}
		k := epKey{ev.Bus, ev.Device, addr}
		e := eps[k]
		if e == nil {
			if len(eps) >= usb.DefaultMaxEndpoints {
				continue
			}
			e = &USBEndpoint{Bus: ev.Bus, Device: ev.Device, Endpoint: addr}
			eps[k] = e
		}
		switch {
		case ev.Type == usbmon.SubmitError || ev.Type == usbmon.Callback && ev.Status < 0:
			e.Errors.Add(t, 1)
		case ev.Type == usbmon.Callback && ev.Status == 0:
			e.Bytes.Add(t, float64(ev.Length))
		}
		if ok && ev.Type == usbmon.Callback {
			e.Latency.Add(p.Latency)
		}
	}
	u.Pairs = pairer.Counts()
	lost, err := usbmon.ReaderLoss(rd, readErr)
	if err != nil {
		return nil, nil, err
	}
	u.Loss = strings.Join(lost, "; ")
	for _, s := range u.Stats.Endpoints() {
		if e := eps[epKey{s.Bus, s.Device, s.Endpoint}]; e != nil {
			u.Endpoints = append(u.Endpoints, e)
		}
	}
	return u, span, nil
}

func analyzeUSBFile(ctx context.Context, path string) (*USB, *Span, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	u, sp, err := AnalyzeUSB(ctx, f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return u, sp, nil
}

// Identity is "VVVV:PPPP Manufacturer Product" as far as known, "" when
// nothing is known about the device.
func Identity(ids *usb.Identities, bus uint16, dev uint8) string {
	v, m, p := ids.Names(bus, dev)
	return strings.TrimSpace(strings.Join([]string{v, m, p}, " "))
}

// FmtMicros formats microseconds as a Go duration ("1.5ms").
func FmtMicros(us int64) string {
	return time.Duration(us * 1000).String()
}

// FmtRate formats bytes per second ("14.2kB/s").
func FmtRate(bps float64) string {
	switch {
	case bps >= 1e6:
		return fmt.Sprintf("%.1fMB/s", bps/1e6)
	case bps >= 1e3:
		return fmt.Sprintf("%.1fkB/s", bps/1e3)
	}
	return fmt.Sprintf("%.0fB/s", bps)
}

// Problems lists the non-OK statuses as "EPIPE×2 EPROTO×1", "-" when none.
func Problems(m map[int32]uint64) string {
	var keys []int32
	for s := range m {
		if s < 0 {
			keys = append(keys, s)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] > keys[j] })
	var parts []string
	for _, s := range keys {
		parts = append(parts, fmt.Sprintf("%s×%d", usb.StatusName(s), m[s]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// USBTableOptions tune WriteUSBTable.
type USBTableOptions struct {
	// Unidentified is printed after the address of a device whose
	// identity is unknown.
	Unidentified string
	// Fold lists the devices without identity on one line.
	Fold bool
	// Honest prints latencies with the precision the histogram has (3
	// significant digits, FmtLatency) and no p99 for endpoints with fewer
	// than PrecisionMinCount transfers, whose p99 is merely their maximum.
	Honest bool
}

// PrecisionMinCount is the number of values a p99 needs to be more than
// the largest value seen.
const PrecisionMinCount = 100

// FmtLatency formats a latency from usb.Histogram with the precision it
// has: exact below 64 µs, 3 significant digits above (the histogram is
// within 3.2%).
func FmtLatency(us int64) string {
	if us < 1000 {
		return FmtMicros(us)
	}
	d := time.Duration(us) * time.Microsecond
	unit := time.Duration(1)
	for u := d; u >= 1000; u /= 10 {
		unit *= 10
	}
	return d.Round(unit).String()
}

// WriteUSBTable prints the per-endpoint table of 'iotap usb stats': one row
// per endpoint and one per device, the devices' identities and the
// pairing summary.
func WriteUSBTable(w io.Writer, st *usb.Stats, pairs usb.PairCounts, ids *usb.Identities, o USBTableOptions) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "DEVICE\tEP\tTYPE\tSUBMIT\tCOMPLETE\tBYTES\tRATE\tLAT MIN\tP50\tP99\tMAX\tERRORS\tSTALLS\tCANCELLED\tSTATUS\n")
	devs := st.Devices()
	eps := st.Endpoints()
	few := 0
	for _, d := range devs {
		dev := fmt.Sprintf("%d:%03d", d.Bus, d.Device)
		for _, s := range eps {
			if s.Bus != d.Bus || s.Device != d.Device {
				continue
			}
			lat := latencyCells(&s.Latency, o.Honest)
			if o.Honest && s.Latency.Count() > 0 && s.Latency.Count() < PrecisionMinCount {
				few++
			}
			fmt.Fprintf(tw, "%s\t%02x %s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n",
				dev, s.Endpoint, usb.DirectionName(s.Endpoint&0x80 != 0), s.Transfer, s.Submissions, s.Completions, s.Bytes,
				FmtRate(s.BytesPerSecond()), lat[0], lat[1], lat[2], lat[3], s.Errors+s.SubmitErrors, s.Stalls, s.Cancelled, Problems(s.Status))
		}
		lat := latencyCells(&d.Latency, o.Honest)
		fmt.Fprintf(tw, "%s\tall\t\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", dev, d.Submissions, d.Completions, d.Bytes,
			FmtRate(d.BytesPerSecond()), lat[0], lat[1], lat[2], lat[3], d.Errors+d.SubmitErrors, d.Stalls, d.Cancelled, Problems(d.Status))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if few > 0 {
		fmt.Fprintf(w, "P99 (n=N): fewer than %d transfers, too few for a 99th percentile; MAX is the largest latency seen\n", PrecisionMinCount)
	}
	var unknown []string
	for _, d := range devs {
		name := Identity(ids, d.Bus, d.Device)
		if name == "" && o.Fold {
			unknown = append(unknown, fmt.Sprintf("%d:%03d", d.Bus, d.Device))
			continue
		}
		if name == "" {
			name = o.Unidentified
		}
		fmt.Fprintf(w, "%d:%03d %s\n", d.Bus, d.Device, name)
	}
	if len(unknown) > 0 {
		fmt.Fprintf(w, "identity not captured for %s (%s)\n", strings.Join(unknown, " "), o.Unidentified)
	}
	c := pairs
	_, err := fmt.Fprintf(w, "%d events over %s; %d transfers paired; %d submissions unmatched (%d in flight at the end, %d superseded); %d orphan completions; %d submission errors\n",
		st.Events(), FmtMicros(st.Span()), c.Pairs, c.Unmatched, c.InFlight, c.Superseded, c.Orphans, c.SubmitErrors)
	if err == nil && st.Untracked() > 0 {
		_, err = fmt.Fprintf(w, "%d events of endpoints beyond the first %d not counted per endpoint\n", st.Untracked(), usb.DefaultMaxEndpoints)
	}
	if err == nil && c.Overflow > 0 {
		_, err = fmt.Fprintf(w, "%d submissions not tracked: more than %d in flight\n", c.Overflow, usb.DefaultMaxPending)
	}
	return err
}

func latencyCells(h *usb.Histogram, honest bool) [4]string {
	if h.Count() == 0 {
		return [4]string{"-", "-", "-", "-"}
	}
	if !honest {
		return [4]string{FmtMicros(h.Min()), FmtMicros(h.Quantile(0.5)), FmtMicros(h.Quantile(0.99)), FmtMicros(h.Max())}
	}
	p99 := FmtLatency(h.Quantile(0.99))
	if h.Count() < PrecisionMinCount {
		p99 = fmt.Sprintf("(n=%d)", h.Count())
	}
	// Min and max are exact.
	return [4]string{FmtMicros(h.Min()), FmtLatency(h.Quantile(0.5)), p99, FmtMicros(h.Max())}
}

// LogHist counts non-negative values (microseconds) in logarithmic bins,
// LogBinsPerDecade per power of ten from 1: bin 0 holds [0, 10^(1/n)),
// bin i holds [10^(i/n), 10^((i+1)/n)).
type LogHist struct {
	Counts []uint64 `json:"counts"`
}

// LogBinsPerDecade is the resolution of LogHist.
const LogBinsPerDecade = 5

// LogBinLow is the lower edge of bin i (0 for bin 0).
func LogBinLow(i int) float64 {
	if i == 0 {
		return 0
	}
	return math.Pow(10, float64(i)/LogBinsPerDecade)
}

// Add counts v.
func (h *LogHist) Add(v int64) {
	i := 0
	if v >= 1 {
		i = int(math.Floor(math.Log10(float64(v)) * LogBinsPerDecade))
		// Guard against rounding at exact powers.
		for i > 0 && LogBinLow(i) > float64(v) {
			i--
		}
		for LogBinLow(i+1) <= float64(v) {
			i++
		}
	}
	for len(h.Counts) <= i {
		h.Counts = append(h.Counts, 0)
	}
	h.Counts[i]++
}
