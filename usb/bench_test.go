package usb

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

// benchEvents loads a public capture into memory.
func benchEvents(b *testing.B) []*usbmon.Event {
	b.Helper()
	return readAll(b, sharedCapture(b, "km003c-adc-1000hz.pcapng"))
}

// BenchmarkPairStats is the streaming analysis path: pairing and
// per-endpoint statistics, no allocation per event.
func BenchmarkPairStats(b *testing.B) {
	evs := benchEvents(b)
	st := NewStats()
	for _, e := range evs {
		st.Add(e)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st.Add(evs[i%len(evs)])
	}
}

// BenchmarkDecodePair adds identities and payload decoding (control
// requests, descriptors, BOT) to the pairing path, as `iotap usb read`
// does before formatting.
func BenchmarkDecodePair(b *testing.B) {
	evs := benchEvents(b)
	ids := NewIdentities()
	d := NewDecoder(ids)
	p := NewPairer()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e := evs[i%len(evs)]
		pr, ok := p.Add(e)
		if ok {
			ids.Observe(pr, e)
		}
		_ = d.Decode(e, pr, ok)
	}
}

// BenchmarkReadPairStats reads the pcapng from memory with the usbmon
// streaming reader and runs the analysis path: events per second of
// `iotap usb stats` without the output.
func BenchmarkReadPairStats(b *testing.B) {
	raw, err := os.ReadFile(sharedCapture(b, "km003c-adc-1000hz.pcapng"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		r, _, err := usbmon.NewReader(bytes.NewReader(raw))
		if err != nil {
			b.Fatal(err)
		}
		st := NewStats()
		var ev usbmon.Event
		for {
			err := r.ReadInto(&ev)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			st.Add(&ev)
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkSetupDescribe formats a setup packet without allocating.
func BenchmarkSetupDescribe(b *testing.B) {
	s := Setup{0x80, 6, 0x0304, 0x0409, 255}
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = s.AppendDescription(buf[:0], 0)
	}
}

func BenchmarkParseConfiguration(b *testing.B) {
	cfg := mustHex(b, km003cConfig)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseConfiguration(cfg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseReportDescriptor(b *testing.B) {
	rd := mustHex(b, bootKeyboard)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseReportDescriptor(rd); err != nil {
			b.Fatal(err)
		}
	}
}
