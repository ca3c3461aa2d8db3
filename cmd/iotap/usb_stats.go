package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/iotap/iotap/report"
	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

func newUSBStatsCmd(e *env) *cobra.Command {
	var o usbAnOptions
	c := &cobra.Command{
		Use:   "stats [flags] FILE",
		Short: "Per device and endpoint counts, bytes, rates, latency percentiles, errors and stalls",
		Long: `Summarise a usbmon capture per device and endpoint: submissions, completions,
bytes moved (actual lengths of successful completions), rate over the
endpoint's active time, latency from submission to completion
(min/median/p99/max), errors by name (EPROTO, ETIMEDOUT, ...), stalls (EPIPE)
and cancellations (ENOENT, ECONNRESET, ESHUTDOWN, ENODEV: URBs unlinked by
their driver or killed by a disconnect).

Latency percentiles come from a log-linear histogram: exact below 64 µs,
within 3.2% above; min and max are exact. Memory does not grow with the
length of the capture.

Pairing: URB ids are kernel pointers that are reused, so a completion pairs
with the most recent unmatched submission of the same id, bus, device and
endpoint. Submissions without a completion (in flight at the end, or whose
completion was lost) and completions without a submission (the capture
started while they were in flight) are counted, not guessed.

The same filters as 'iotap usb read' select the events counted.`,
		Example: `  iotap usb stats capture.pcapng
  iotap usb stats --json --vidpid 0781:5583 0u.txt`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUSBStats(e, &o, args[0])
		},
	}
	o.register(c.Flags(), true)
	return c
}

type usbLatencyJSON struct {
	Count uint64 `json:"count"`
	Min   int64  `json:"min_us"`
	P50   int64  `json:"p50_us"`
	P99   int64  `json:"p99_us"`
	Max   int64  `json:"max_us"`
}

type usbStatsJSON struct {
	Kind         string            `json:"kind"` // "endpoint", "device", "summary"
	Bus          uint16            `json:"bus"`
	Device       uint8             `json:"device"`
	Endpoint     *uint8            `json:"endpoint,omitempty"`
	Transfer     string            `json:"transfer,omitempty"`
	Dir          string            `json:"dir,omitempty"`
	VIDPID       string            `json:"vidpid,omitempty"`
	Manufacturer string            `json:"manufacturer,omitempty"`
	Product      string            `json:"product,omitempty"`
	Submissions  uint64            `json:"submissions"`
	Completions  uint64            `json:"completions"`
	SubmitErrors uint64            `json:"submit_errors"`
	Errors       uint64            `json:"errors"`
	Stalls       uint64            `json:"stalls"`
	Cancelled    uint64            `json:"cancelled"`
	Bytes        uint64            `json:"bytes"`
	BytesPerSec  float64           `json:"bytes_per_sec"`
	SpanUs       int64             `json:"span_us"`
	Latency      usbLatencyJSON    `json:"latency"`
	Status       map[string]uint64 `json:"status"`
}

type usbSummaryJSON struct {
	Kind      string         `json:"kind"`
	Events    uint64         `json:"events"`
	Untracked uint64         `json:"untracked_events"`
	SpanUs    int64          `json:"span_us"`
	Pairs     usb.PairCounts `json:"pairing"`
}

func latencyJSON(h *usb.Histogram) usbLatencyJSON {
	return usbLatencyJSON{Count: h.Count(), Min: h.Min(), P50: h.Quantile(0.5), P99: h.Quantile(0.99), Max: h.Max()}
}

func statusJSON(m map[int32]uint64) map[string]uint64 {
	out := map[string]uint64{}
	for s, n := range m {
		out[usb.StatusName(s)] += n
	}
	return out
}

func runUSBStats(e *env, o *usbAnOptions, path string) error {
	in, err := openUSBAnInput(e, o, path)
	if err != nil {
		return err
	}
	defer in.close()
	st := usb.NewStats()
	readErr := in.each(func(_ uint64, ev *usbmon.Event, p usb.Pair, paired bool) error {
		st.Record(ev, p, paired)
		return nil
	})
	if readErr != nil && !isLoss(readErr) {
		return readErr
	}
	if o.json {
		err = writeUSBStatsJSON(e.stdout, st, in)
	} else {
		err = writeUSBStatsTable(e.stdout, st, in)
	}
	if err != nil {
		return err
	}
	return in.finish(readErr)
}

func isLoss(err error) bool { return err != nil && errors.Is(err, usbmon.ErrTruncated) }

func identityOf(in *usbAnInput, bus uint16, dev uint8) (vidpid, manu, prod string) {
	info, ok := in.pl.Identities.Lookup(bus, dev)
	if !ok {
		return "", "", ""
	}
	if info.HasID {
		vidpid = fmt.Sprintf("%04x:%04x", info.Vendor, info.Product)
	}
	return vidpid, info.Manufacturer, info.ProductName
}

func writeUSBStatsJSON(w io.Writer, st *usb.Stats, in *usbAnInput) error {
	enc := json.NewEncoder(w)
	for _, d := range st.Devices() {
		v, m, p := identityOf(in, d.Bus, d.Device)
		j := usbStatsJSON{Kind: "device", Bus: d.Bus, Device: d.Device, VIDPID: v, Manufacturer: m, Product: p,
			Submissions: d.Submissions, Completions: d.Completions, SubmitErrors: d.SubmitErrors, Errors: d.Errors,
			Stalls: d.Stalls, Cancelled: d.Cancelled, Bytes: d.Bytes, BytesPerSec: d.BytesPerSecond(), SpanUs: d.Span(),
			Latency: latencyJSON(&d.Latency), Status: statusJSON(d.StatusCounts())}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	for _, s := range st.Endpoints() {
		ep := s.Endpoint
		v, _, _ := identityOf(in, s.Bus, s.Device)
		j := usbStatsJSON{Kind: "endpoint", Bus: s.Bus, Device: s.Device, Endpoint: &ep, Transfer: s.Transfer.String(),
			Dir: usb.DirectionName(ep&0x80 != 0), VIDPID: v, Submissions: s.Submissions, Completions: s.Completions,
			SubmitErrors: s.SubmitErrors, Errors: s.Errors, Stalls: s.Stalls, Cancelled: s.Cancelled, Bytes: s.Bytes,
			BytesPerSec: s.BytesPerSecond(), SpanUs: s.Span(), Latency: latencyJSON(&s.Latency), Status: statusJSON(s.StatusCounts())}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return enc.Encode(usbSummaryJSON{Kind: "summary", Events: st.Events(), Untracked: st.Untracked(), SpanUs: st.Span(), Pairs: in.pl.Pairer.Counts()})
}

func fmtMicros(us int64) string { return report.FmtMicros(us) }

func writeUSBStatsTable(w io.Writer, st *usb.Stats, in *usbAnInput) error {
	return report.WriteUSBTable(w, st, in.pl.Pairer.Counts(), in.pl.Identities, report.USBTableOptions{
		Unidentified: "identity not captured (enumeration not in the capture; try --sysfs on a live system)",
	})
}
