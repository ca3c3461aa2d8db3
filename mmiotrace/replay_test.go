package mmiotrace

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

type recTarget struct {
	ops  []string
	regs map[uint64]uint64
}

func (r *recTarget) Write(bar int, off uint64, width int, v uint64) error {
	r.ops = append(r.ops, fmt.Sprintf("W%d %d+0x%x 0x%x", width, bar, off, v))
	r.regs[off] = v
	return nil
}

func (r *recTarget) Read(bar int, off uint64, width int) (uint64, error) {
	r.ops = append(r.ops, fmt.Sprintf("R%d %d+0x%x", width, bar, off))
	return r.regs[off], nil
}

const replayLog = `VERSION 20070824
PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000
MAP 1.000000 1 0xfebc0000 0xffffc90000100000 0x20000 0x0 0
W 4 1.000001 1 0xfebc00d8 0xffffffff 0x0 0
MARK 1.000002 go
W 1 1.000003 1 0xfebc0010 0x7 0x0 0
W 2 1.000004 1 0xfebc0012 0xbeef 0x0 0
R 2 1.000005 1 0xfebc0012 0xbeef 0x0 0
R 1 1.000006 1 0xfebc0010 0x8 0x0 0
W 8 1.000007 1 0xfebc0100 0x1122334455667788 0x0 0
W 4 1.000008 1 0xdead0000 0x1 0x0 0
MARK 1.000009 stop
W 4 1.000010 1 0xfebc0000 0x1 0x0 0
`

func TestReplay(t *testing.T) {
	tg := &recTarget{regs: map[uint64]uint64{}}
	var div []string
	st, err := Replay(context.Background(), strings.NewReader(replayLog), tg, ReplayOptions{
		StartMark: "go", StopMark: "stop", CheckReads: true,
		OnDivergence: func(_ int64, r *Record, loc Location, got uint64) {
			div = append(div, fmt.Sprintf("0x%x: got 0x%x want 0x%x", loc.Offset, got, r.Value))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "W1 0+0x10 0x7|W2 0+0x12 0xbeef|R2 0+0x12|R1 0+0x10|W8 0+0x100 0x1122334455667788"
	if got := strings.Join(tg.ops, "|"); got != want {
		t.Errorf("ops:\n%s\nwant\n%s", got, want)
	}
	if st.Writes != 3 || st.Reads != 2 || st.Divergences != 1 || st.Unmapped != 1 || len(div) != 1 || div[0] != "0x10: got 0x7 want 0x8" {
		t.Errorf("stats %+v, divergences %v", st, div)
	}

	// Ranges and fixed pacing.
	tg = &recTarget{regs: map[uint64]uint64{}}
	br, _ := ParseBARRange("0000:00:03.0/0+0xd8..0xdc")
	st, err = Replay(context.Background(), strings.NewReader(replayLog), tg, ReplayOptions{BARs: []BARRange{br}, Pacing: PaceFixed, Delay: time.Millisecond})
	if err != nil || strings.Join(tg.ops, "|") != "W4 0+0xd8 0xffffffff" || st.Writes != 1 {
		t.Errorf("bar-limited replay: %v %v %+v", err, tg.ops, st)
	}

	// Cancellation stops a paced replay.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Replay(ctx, strings.NewReader(replayLog), &recTarget{regs: map[uint64]uint64{}}, ReplayOptions{Pacing: PaceRecorded}); err == nil {
		t.Error("cancelled replay did not fail")
	}
}
