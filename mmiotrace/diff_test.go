package mmiotrace

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
)

func acc(kind Kind, off uint64, v uint64) Access {
	return Access{Kind: kind, Key: RegKey{Offset: off, Width: 4}, Value: v, Count: 1}
}

// lcsLen is the reference: length of the longest common subsequence by
// (kind, key), by dynamic programming.
func lcsLen(a, b []Access) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i].Kind == b[j].Kind && a[i].Key == b[j].Key {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func TestDiffIsMinimalAndConsistent(t *testing.T) {
	rnd := rand.New(rand.NewSource(5))
	for iter := 0; iter < 300; iter++ {
		var a, b []Access
		for i := 0; i < rnd.Intn(30); i++ {
			a = append(a, acc(Kind(1+rnd.Intn(2)), uint64(rnd.Intn(5)*4), uint64(rnd.Intn(2))))
		}
		for i := 0; i < rnd.Intn(30); i++ {
			b = append(b, acc(Kind(1+rnd.Intn(2)), uint64(rnd.Intn(5)*4), uint64(rnd.Intn(2))))
		}
		ops, err := Diff(a, b, 0)
		if err != nil {
			t.Fatal(err)
		}
		var ia, ib, common int
		for _, op := range ops {
			switch op.Op {
			case ' ', '~':
				if op.A != &a[ia] || op.B != &b[ib] || op.A.Key != op.B.Key || op.A.Kind != op.B.Kind {
					t.Fatalf("iter %d: bad aligned pair", iter)
				}
				if (op.Op == ' ') != (op.A.Value == op.B.Value) {
					t.Fatalf("iter %d: value marker wrong", iter)
				}
				ia++
				ib++
				common++
			case '-':
				if op.A != &a[ia] {
					t.Fatalf("iter %d: deletion out of order", iter)
				}
				ia++
			case '+':
				if op.B != &b[ib] {
					t.Fatalf("iter %d: insertion out of order", iter)
				}
				ib++
			}
		}
		if ia != len(a) || ib != len(b) {
			t.Fatalf("iter %d: script covers %d/%d and %d/%d", iter, ia, len(a), ib, len(b))
		}
		if want := lcsLen(a, b); common != want {
			t.Fatalf("iter %d: aligned %d, LCS is %d", iter, common, want)
		}
	}
}

func TestAccessesCollapsePolling(t *testing.T) {
	log := "VERSION 20070824\nPCIDEV 0018 8086100e b febc0000 c041 0 0 0 0 feb80002 20000 40 0 0 0 0 40000 e1000\n" +
		"R 4 1.000000 1 0xfebc0008 0x0 0x0 0\nR 4 1.000001 1 0xfebc0008 0x0 0x0 0\nR 4 1.000002 1 0xfebc0008 0x8 0x0 0\n" +
		"W 4 1.000003 1 0xfebc00d8 0xffffffff 0x0 0\n"
	acc, err := Accesses(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(acc) != 3 || acc[0].Count != 2 || acc[0].Key.String() != "0000:00:03.0/0+0x8" || acc[2].Kind != KindWrite {
		t.Fatalf("accesses: %+v", acc)
	}
}

func TestStatsOnLabCapture(t *testing.T) {
	f, err := os.Open("testdata/e1000-bind.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := Analyze(f, StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Cross-check the counts with a plain scan of the text.
	data, _ := os.ReadFile("testdata/e1000-bind.log")
	var reads, writes int64
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "R ") {
			reads++
		} else if strings.HasPrefix(l, "W ") {
			writes++
		}
	}
	if st.Kinds[KindRead] != reads || st.Kinds[KindWrite] != writes {
		t.Fatalf("kinds R %d W %d, text has %d %d", st.Kinds[KindRead], st.Kinds[KindWrite], reads, writes)
	}
	var sum int64
	for _, r := range st.Regs {
		sum += r.Reads + r.Writes
		if !r.Key.HasBAR || r.Key.Dev.String() != "0000:00:03.0" {
			t.Errorf("register %v not resolved to the e1000 BAR", r.Key)
		}
	}
	if sum != reads+writes {
		t.Errorf("per-register counts sum to %d, want %d", sum, reads+writes)
	}
	if len(st.Maps) != 1 || st.Maps[0].Reads != reads || st.Maps[0].Phys != 0xfebc0000 {
		t.Errorf("maps: %+v", st.Maps)
	}
	// QEMU's e1000 answers at once: the probe never reads a register
	// more than twice in a row, so there is no polling loop.
	if st.LoopCount != 0 {
		t.Errorf("%d polling loops found in a probe without any", st.LoopCount)
	}
}

func TestStatsPollingLoop(t *testing.T) {
	var b strings.Builder
	b.WriteString("VERSION 20070824\nPCIDEV 0018 8086100e b febc0000 c041 0 0 0 0 feb80002 20000 40 0 0 0 0 40000 e1000\n")
	b.WriteString("MAP 1.000000 1 0xfebc0000 0xffffc90000100000 0x20000 0x0 0\n")
	loop := func(n int, off, first, last uint64) {
		for i := 0; i < n; i++ {
			v := first
			if i == n-1 {
				v = last
			}
			fmt.Fprintf(&b, "R 4 1.%06d 1 0x%x 0x%x 0x0 0\n", i, 0xfebc0000+off, v)
		}
		b.WriteString("W 4 2.000000 1 0xfebc00d8 0xffffffff 0x0 0\n")
	}
	loop(1532, 0x8, 0x80080783, 0x8008078b)
	loop(10, 0x10, 0x11, 0x10)
	loop(3, 0x14, 0, 1) // too short to be a loop
	st, err := Analyze(strings.NewReader(b.String()), StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.LoopCount != 2 || len(st.Loops) != 2 {
		t.Fatalf("loops: %d %+v", st.LoopCount, st.Loops)
	}
	l := st.Loops[0]
	if l.Count != 1532 || l.Key.String() != "0000:00:03.0/0+0x8" || l.Describe() != "until bit 3 set" || l.Line != 4 {
		t.Errorf("longest loop %+v: %s", l, l.Describe())
	}
	if d := st.Loops[1].Describe(); st.Loops[1].Count != 10 || d != "until bit 0 cleared" {
		t.Errorf("second loop %+v: %s", st.Loops[1], d)
	}
	if st.Regs[0].Key.Offset != 0x8 || st.Regs[0].Reads != 1532 || st.Regs[0].PollLoops != 1 || st.Regs[0].PollReads != 1532 {
		t.Errorf("hottest register %+v", st.Regs[0])
	}
}

func TestPollLoopDescribe(t *testing.T) {
	for _, tc := range []struct {
		p    PollLoop
		want string
	}{
		{PollLoop{First: 0, Last: 8}, "until bit 3 set"},
		{PollLoop{First: 0x11, Last: 0x10}, "until bit 0 cleared"},
		{PollLoop{First: 0x1, Last: 0x6}, "until bits 1,2 set, bit 0 cleared"},
		{PollLoop{First: 5, Last: 5, Constant: true}, "value 0x5 constant"},
	} {
		if got := tc.p.Describe(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
		}
	}
}
