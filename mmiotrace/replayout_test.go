package mmiotrace

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// offByOne reads every register as its recorded value plus one.
type offByOne struct{ d *dryTarget }

func (o offByOne) Write(int, uint64, int, uint64) error  { return nil }
func (o offByOne) Read(int, uint64, int) (uint64, error) { return o.d.last + 1, nil }

// TestReplayPrinterDivergence: a read that differs is printed as the CLI
// printed it (text and NDJSON), and counted.
func TestReplayPrinterDivergence(t *testing.T) {
	const log = "VERSION 20070824\n" +
		"PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000\n" +
		"MAP 8.286086 1 0xfebc0000 0xff508fd9c0220000 0x20000 0x0 0\n" +
		"R 4 8.288891 1 0xfebc0008 0x80080783 0x0 0\n"
	for _, c := range []struct {
		json bool
		want string
	}{
		{false, "divergence: line \"R 4 8.288891 1 0xfebc0008 0x80080783 0x0 0\": 0000:00:03.0/0+0x8 read 0x80080784, recorded 0x80080783\n"},
		{true, `{"kind":"mmio_replay_divergence","line":4,"access":"R","ts_ns":8288891000,"phys":"0xfebc0008","value":"0x80080783","location":"0000:00:03.0/0+0x8","bar":"0000:00:03.0/0","offset":"0x8","width":4,"got":"0x80080784"}` + "\n" +
			`{"kind":"mmio_replay_summary","dry_run":false,"writes":0,"reads":1,"divergences":1,"unmapped":0,"skipped":0,"lost":0}` + "\n"},
	} {
		var out bytes.Buffer
		pr := NewReplayPrinter(&out, c.json)
		opt := ReplayOptions{CheckReads: true, OnDivergence: pr.Divergence}
		d := DryRun(&opt).(*dryTarget)
		st, err := Replay(context.Background(), strings.NewReader(log), offByOne{d}, opt)
		if err != nil {
			t.Fatal(err)
		}
		pr.Summary(st, false)
		if out.String() != c.want || st.Divergences != 1 {
			t.Errorf("json %v: %d divergences, printed\n%s\nwant\n%s", c.json, st.Divergences, out.String(), c.want)
		}
	}
}
