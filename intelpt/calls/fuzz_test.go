package calls

import (
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// FuzzTracker drives the tracker with arbitrary blocks and events: no
// panic, every call that begins ends (after Finish), calls end after they
// begin, a call's depth is one more than its caller's, and the tree counts
// every call down to its depth limit.
func FuzzTracker(f *testing.F) {
	f.Add([]byte{0x02, 0x10, 0x05, 0x23, 0x01, 0x31, 0x44, 0x02, 0x12})
	f.Add([]byte{0x02, 0x10, 0x02, 0x20, 0x02, 0x30, 0x14, 0x00, 0x05, 0x55, 0x66, 0x77})
	f.Fuzz(func(t *testing.T, data []byte) {
		begun, ended, inTree := 0, 0, 0
		var depth = map[int]int{}
		tr := NewTracker(func(c *Call) {
			ended++
			if c.Depth <= DefaultTreeDepth { // deeper ones are summed into one node
				inTree++
			}
			if c.EndInsn < c.BeginInsn || c.End < c.Begin {
				t.Fatalf("call ends before it begins: %+v", c)
			}
		})
		tr.OnBegin = func(c *Call) {
			begun++
			if c.Depth > 0 && depth[c.Depth-1] == 0 {
				t.Fatalf("call at depth %d without a caller", c.Depth)
			}
			depth[c.Depth]++
		}
		tr.Thread(1, syms{})
		now := uint64(0)
		classes := []intelpt.InsnClass{intelpt.ClassOther, intelpt.ClassCall, intelpt.ClassReturn, intelpt.ClassJump, intelpt.ClassCondJump, intelpt.ClassFarCall}
		for i := 0; i+1 < len(data); i += 2 {
			op, arg := data[i], data[i+1]
			now += uint64(op >> 4)
			ip := 0x1000 + uint64(arg)<<4 // inside or outside the two known functions
			if arg&0x80 != 0 {
				ip = 0x2000 + uint64(arg&0x7f)
			}
			switch op & 0xf {
			case 0xd:
				tr.Disabled(now)
			case 0xe:
				tr.Enabled(ip, now)
			case 0xf:
				tr.Gap(now, now, "fuzz")
			default:
				c := classes[int(op&0xf)%len(classes)]
				tr.Block(ip, ip+uint64(arg&7), 1+int(arg&3), c, 5, arg&8 != 0, now)
			}
		}
		tr.Finish(now)
		if begun != ended {
			t.Fatalf("%d calls began, %d ended", begun, ended)
		}
		n := 0
		var walk func(*Node)
		walk = func(nd *Node) {
			n += nd.Count
			for _, c := range nd.Children {
				walk(c)
			}
		}
		walk(tr.Tree)
		if n != inTree {
			t.Fatalf("tree counts %d calls, %d ended within its depth", n, inTree)
		}
	})
}

// syms knows main at 0x1000 and f at 0x2000.
type syms struct{}

func (syms) Func(a uint64) (Func, bool) {
	switch {
	case a >= 0x1000 && a < 0x1100:
		return Func{Entry: 0x1000, End: 0x1100, Name: "main"}, true
	case a >= 0x2000 && a < 0x2040:
		return Func{Entry: 0x2000, End: 0x2040, Name: "f"}, true
	}
	return Func{}, false
}

func (syms) Unknown(a uint64) string { return "unknown" }
