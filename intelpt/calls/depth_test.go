package calls

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// recursion feeds tr a recursion of f d deep, called from main: main runs
// 4 instructions and calls f; each f runs 3 and calls f, the deepest runs 5
// and returns, each then runs 2 more and returns; main runs 2 more.
func recursion(tr *Tracker, d int) {
	tr.Thread(1, syms{})
	now := uint64(0)
	tick := func() uint64 { now += 10; return now }
	tr.Block(0x1000, 0x1010, 4, intelpt.ClassCall, 5, false, tick())
	for i := 1; i < d; i++ {
		tr.Block(0x2000, 0x2008, 3, intelpt.ClassCall, 5, false, tick())
	}
	tr.Block(0x2000, 0x2010, 5, intelpt.ClassReturn, 1, false, tick())
	for i := 1; i < d; i++ {
		tr.Block(0x200d, 0x2010, 2, intelpt.ClassReturn, 1, false, tick())
	}
	tr.Block(0x1015, 0x1020, 2, intelpt.ClassOther, 0, false, tick())
	tr.Finish(tick())
}

// TestTreeDepthLimit: a deep recursion gives a tree (and collapsed stacks)
// bounded by the depth limit: the calls below it are summed into one
// DeeperCalls node, every instruction is still counted once, and without a
// limit every level has its own node. (A pt calls --folded run on a random
// 30 M-instruction trace, whose stack grows thousands of frames deep, once
// wrote 82 GB: every path printed whole.)
func TestTreeDepthLimit(t *testing.T) {
	const d = 1000
	total := uint64(4 + 3*(d-1) + 5 + 2*(d-1) + 2)
	for _, limit := range []int{0, 10, -1} {
		tr := NewTracker(nil)
		tr.TreeDepth = limit
		recursion(tr, d)
		if tr.Stats.Insns != total {
			t.Fatalf("limit %d: %d instructions, want %d", limit, tr.Stats.Insns, total)
		}
		var buf bytes.Buffer
		if err := WriteFolded(&buf, tr.Tree, false); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		L := limit
		switch limit {
		case 0:
			L = DefaultTreeDepth
		case -1:
			L = d + 1 // no limit: main and d levels of f
		}
		// main at depth 0, f at depths 1..L-1, then the deeper calls
		want := []string{"thread_1;main 6"}
		path := "thread_1;main"
		for k := 1; k < L && k <= d; k++ {
			path += ";f"
			want = append(want, fmt.Sprintf("%s %d", path, 5))
		}
		if L <= d {
			want = append(want, fmt.Sprintf("%s;[deeper_calls] %d", path, 5*(d-L+1)))
		}
		if len(lines) != len(want) {
			t.Fatalf("limit %d: %d lines of collapsed stacks, want %d", limit, len(lines), len(want))
		}
		var sum uint64
		for i := range want {
			if lines[i] != want[i] {
				t.Fatalf("limit %d: line %d is %.80q, want %.80q", limit, i, lines[i], want[i])
			}
			var v uint64
			fmt.Sscan(lines[i][strings.LastIndexByte(lines[i], ' ')+1:], &v)
			sum += v
		}
		if sum != total {
			t.Errorf("limit %d: collapsed stacks weigh %d instructions, want %d", limit, sum, total)
		}
		if limit >= 0 && buf.Len() > (L+1)*(L+1)*2+100 {
			t.Errorf("limit %d: %d bytes of collapsed stacks", limit, buf.Len())
		}
	}
}
