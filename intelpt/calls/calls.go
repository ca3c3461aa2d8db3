package calls

import (
	"strconv"

	"github.com/iotap/iotap/intelpt"
)

// Func is a function as a Symbolizer knows it.
type Func struct {
	Entry, End uint64 // run-time range [Entry, End); End == Entry+1 when unknown
	Name       string
}

// Symbolizer names code addresses of one thread's process.
type Symbolizer interface {
	// Func returns the function holding addr; ok is false when no symbol
	// covers addr.
	Func(addr uint64) (f Func, ok bool)
	// Unknown names code at addr that no symbol covers ("libc.so.6+0x29d90").
	Unknown(addr uint64) string
}

// How a call began (Call.Kind).
const (
	KindCall     = "call"          // a direct call
	KindIndirect = "indirect-call" // a call through a register or memory
	KindTail     = "tail-call"     // a jump to another function's entry (replaces its caller)
	KindRoot     = "root"          // running when tracing started or resumed, or the caller a return went back to
)

// How a call ended (Call.EndReason).
const (
	EndReturn    = "return"    // its return
	EndTail      = "tail-call" // it jumped to another function (KindTail)
	EndUnwound   = "unwound"   // a longjmp or exception left it, or a return skipped it
	EndGap       = "gap"       // trace lost (overflow, decode error): not seen to end
	EndTraceEnd  = "trace-end" // the trace ended with it running
	EndRootAbove = "returned"  // a root frame that returned to its caller
)

// Call is one function activation.
type Call struct {
	Thread    int32
	Depth     int // 0 for the bottom of the stack
	Func      string
	Entry     uint64 // run-time address of the function (or where a root frame began)
	Kind      string
	EndReason string
	// Begin and End are the trace times (TSC, or what the time source
	// gives) of the call and of its end; BeginInsn/EndInsn count the
	// thread's instructions: the call ran [BeginInsn, EndInsn).
	Begin, End         uint64
	BeginInsn, EndInsn uint64
	// SelfInsn: instructions run in this function, not in its callees.
	SelfInsn uint64
	// Children is the number of direct callees.
	Children int
}

// Gap is a part of a thread's trace where calls could not be followed.
type Gap struct {
	Thread     int32
	Begin, End uint64 // times
	Insn       uint64 // instruction count of the thread at the gap
	Reason     string
}

// Stats count what the tracker saw.
type Stats struct {
	Blocks, Insns                   uint64
	Calls, Returns, TailCalls       uint64
	UnmatchedReturns, Unwinds, Gaps uint64
}

// maxSearch bounds how far down the stack a return or a jump looks for
// the frame it goes to (64: the depth of the CPU's return stack; deeper
// skips are rare and the search must not make deep stacks quadratic).
const maxSearch = 64

type frame struct {
	c         Call
	lo, hi    uint64 // function range (hi == lo+1 when unknown)
	ret       uint64 // expected return address (0: unknown, for roots)
	child     uint64 // instructions run in callees
	childTime uint64 // time spent in callees
	node      *Node
	// deep: the frame is at the tree's depth limit: its node is the
	// DeeperCalls node of its caller's path and takes all of its
	// instructions and time; inner: deeper still (its node is that same
	// node, which it does not count in).
	deep, inner bool
	// begun: OnBegin was told (with Tracker.Keep: only once the call is
	// known to be kept)
	begun bool
	// unnamed: c.Func is not set yet (code no symbol covers: its name,
	// Symbolizer.Unknown, is made only when something reads it).
	unnamed bool
}

// named sets f.c.Func when it was left for later.
func (f *frame) named(sym Symbolizer) *frame {
	if f.unnamed {
		f.c.Func, f.unnamed = sym.Unknown(f.c.Entry), false
	}
	return f
}

type thread struct {
	tid   int32
	node  *Node
	sym   Symbolizer
	stack []frame
	insns uint64
	// the last block, whose successor tells where it went
	pending                bool
	pClass                 intelpt.InsnClass
	pEnd                   uint64 // address of its last instruction
	pLen                   uint8
	pIndirect              bool
	pTime                  uint64
	disabled               bool
	disabledTime, resumeIP uint64
}

// Tracker rebuilds call/return nesting per thread from the blocks of a
// flow decoder (or any source of (instructions, last instruction's class,
// where control went)). Feed it with Block and the Disabled/Enabled/Gap
// events of the trace; it reports each finished Call to Emit (in end
// order: callees before callers) and each Gap to OnGap.
type Tracker struct {
	Emit    func(*Call)
	OnBegin func(*Call) // each call as it begins (nil: not told)
	OnGap   func(*Gap)
	Stats   Stats
	// Tree aggregates the calls: one child per thread, then the call
	// paths (nil: not built).
	Tree *Node
	// TreeDepth bounds the depth of the call paths in Tree (0:
	// DefaultTreeDepth; negative: no bound). Calls deeper than that are
	// summed into one DeeperCalls node under their ancestor at that depth,
	// so that the tree and the outputs made from it (--folded prints every
	// path whole) stay bounded by the distinct stacks cut at that depth,
	// however deep the program's stack grows.
	TreeDepth int
	// Keep, when set, is the resolution: a call for which Keep(begin, end)
	// is false (one too short) is not reported (no OnBegin, no Emit) and
	// not counted in Tree; its instructions and time count as its caller's
	// own. OnBegin is then told of a call when the first call it holds
	// that is kept ends (its callers are longer, so they are kept too), in
	// the order of their begin times, so that begins and ends still come
	// in time order.
	Keep func(begin, end uint64) bool

	threads map[int32]*thread
	cur     *thread
}

// DefaultTreeDepth is the default Tracker.TreeDepth (perf's default
// callchain limit is 127).
const DefaultTreeDepth = 128

// DeeperCalls names the tree node that sums the calls below the depth
// limit (Tracker.TreeDepth).
const DeeperCalls = "[deeper calls]"

// NewTracker returns a tracker reporting to emit (nil: drop) and
// building the call tree.
func NewTracker(emit func(*Call)) *Tracker {
	return &Tracker{Emit: emit, threads: map[int32]*thread{}, Tree: &Node{}}
}

// Node is a call path of the call tree: a function called from its
// parent's path, with the calls' count and inclusive and self
// instructions and time. The root has one child per thread.
type Node struct {
	Name               string
	Count              int
	InclInsn, SelfInsn uint64
	InclTime, SelfTime uint64
	Children           []*Node // in the order first called
	index              map[string]*Node
}

func (n *Node) child(name string) *Node {
	if n.index == nil {
		// few children: a linear search beats a map
		for _, c := range n.Children {
			if c.Name == name {
				return c
			}
		}
		if len(n.Children) >= 8 {
			n.index = make(map[string]*Node, 16)
			for _, c := range n.Children {
				n.index[c.Name] = c
			}
		}
	} else if c := n.index[name]; c != nil {
		return c
	}
	c := &Node{Name: name}
	if n.index != nil {
		n.index[name] = c
	}
	n.Children = append(n.Children, c)
	return c
}

// SetThreadName names a thread's node of the tree ("prog 1234").
func (t *Tracker) SetThreadName(tid int32, name string) {
	if th := t.threads[tid]; th != nil && th.node != nil {
		th.node.Name = name
	}
}

// Thread makes tid the thread of the next blocks; sym names its code.
func (t *Tracker) Thread(tid int32, sym Symbolizer) {
	th := t.threads[tid]
	if th == nil {
		th = &thread{tid: tid, sym: sym}
		t.threads[tid] = th
		if t.Tree != nil {
			th.node = t.Tree.child("thread " + strconv.Itoa(int(tid)))
		}
	}
	if sym != nil {
		th.sym = sym
	}
	t.cur = th
}

func (t *Tracker) emit(th *thread, f *frame, end, endInsn uint64, reason string) {
	f.c.End, f.c.EndInsn, f.c.EndReason = end, endInsn, reason
	if endInsn < f.c.BeginInsn {
		f.c.EndInsn = f.c.BeginInsn
	}
	if t.Keep != nil && !f.begun {
		if !t.Keep(f.c.Begin, f.c.End) {
			return // too short: part of its caller's own
		}
		t.begin(th, f)
	}
	total := f.c.EndInsn - f.c.BeginInsn
	if f.child <= total {
		f.c.SelfInsn = total - f.child
	}
	dur := uint64(0)
	if f.c.End > f.c.Begin {
		dur = f.c.End - f.c.Begin
	}
	if n := len(th.stack); n >= 2 && &th.stack[n-1] == f {
		th.stack[n-2].child += total
		th.stack[n-2].childTime += dur
		th.stack[n-2].c.Children++
	}
	if nd := f.node; nd != nil && !f.inner {
		nd.Count++
		nd.InclInsn += total
		nd.InclTime += dur
		switch {
		case f.deep:
			nd.SelfInsn += total
			nd.SelfTime += dur
		default:
			nd.SelfInsn += f.c.SelfInsn
			if f.childTime <= dur {
				nd.SelfTime += dur - f.childTime
			}
		}
	}
	if t.Emit != nil {
		t.Emit(&f.named(th.sym).c)
	}
}

// pop ends the top frame.
func (t *Tracker) pop(th *thread, end uint64, reason string) {
	n := len(th.stack)
	t.emit(th, &th.stack[n-1], end, th.insns, reason)
	th.stack = th.stack[:n-1]
}

func (t *Tracker) push(th *thread, target, now uint64, kind string, ret uint64) {
	// The frame is built in place: a frame is large, and building it
	// aside and appending it copied it once more on every call.
	parent := th.node
	if n := len(th.stack); n > 0 {
		parent = th.stack[n-1].node
	}
	if n := len(th.stack); n < cap(th.stack) {
		th.stack = th.stack[:n+1]
		th.stack[n] = frame{}
	} else {
		// Double: append grows large slices by a quarter, which for
		// a stack thousands of frames deep (recursion) allocated and
		// copied five times its final size.
		s := make([]frame, n+1, 2*n+64)
		copy(s, th.stack)
		th.stack = s
	}
	depth := len(th.stack) - 1
	f := &th.stack[depth]
	f.ret = ret
	fn, ok := th.sym.Func(target)
	if ok {
		f.lo, f.hi, f.c.Func, f.c.Entry = fn.Entry, fn.End, fn.Name, fn.Entry
	} else {
		f.lo, f.hi, f.c.Entry, f.unnamed = target, target+1, target, true
	}
	f.c.Thread, f.c.Depth, f.c.Kind = th.tid, depth, kind
	if th.node != nil {
		limit := t.TreeDepth
		if limit == 0 {
			limit = DefaultTreeDepth
		}
		switch {
		case limit < 0 || depth < limit:
			f.node = parent.child(f.named(th.sym).c.Func)
		case depth == limit:
			f.node, f.deep = parent.child(DeeperCalls), true
		default:
			f.node, f.inner = parent, true
		}
	}
	f.c.Begin, f.c.BeginInsn = now, th.insns
	if t.Keep == nil && t.OnBegin != nil {
		t.OnBegin(&f.named(th.sym).c)
	}
}

// begin tells OnBegin of f (a frame of th's stack that is kept) and of
// its callers not told yet, bottom first.
func (t *Tracker) begin(th *thread, f *frame) {
	i := len(th.stack) - 1
	for i >= 0 && &th.stack[i] != f {
		i--
	}
	j := i
	for j > 0 && !th.stack[j-1].begun {
		j--
	}
	for ; j <= i; j++ {
		th.stack[j].begun = true
		if t.OnBegin != nil {
			t.OnBegin(&th.stack[j].named(th.sym).c)
		}
	}
	if i < 0 { // not on the stack (cannot happen: emit ends stack frames)
		f.begun = true
		if t.OnBegin != nil {
			t.OnBegin(&f.named(th.sym).c)
		}
	}
}

// Block reports that the current thread ran n instructions starting at
// ip, the last one at end, of class c and length size (needed for calls
// and system calls: where they return), through a register or memory
// operand when indirect, at time now.
func (t *Tracker) Block(ip, end uint64, n int, c intelpt.InsnClass, size uint8, indirect bool, now uint64) {
	th := t.cur
	if th == nil {
		return
	}
	t.Stats.Blocks++
	if th.pending {
		t.resolve(th, ip)
	} else if len(th.stack) == 0 {
		t.push(th, ip, now, KindRoot, 0)
	}
	th.insns += uint64(n)
	t.Stats.Insns += uint64(n)
	th.pending, th.pClass, th.pEnd, th.pLen, th.pIndirect, th.pTime = true, c, end, size, indirect, now
}

// resolve applies the branch of the pending block, which went to next.
func (t *Tracker) resolve(th *thread, next uint64) {
	th.pending = false
	now := th.pTime
	fall := th.pEnd + uint64(th.pLen)
	switch th.pClass {
	case intelpt.ClassCall:
		if next == fall { // call to the next instruction: a PC read, not a call
			return
		}
		kind := KindCall
		if th.pIndirect {
			kind = KindIndirect
		}
		t.Stats.Calls++
		t.push(th, next, now, kind, fall)
	case intelpt.ClassReturn:
		t.Stats.Returns++
		t.ret(th, next, now)
	case intelpt.ClassJump:
		top := &th.stack[len(th.stack)-1]
		if next >= top.lo && next < top.hi {
			return
		}
		fn, ok := th.sym.Func(next)
		if !ok || fn.Entry == top.lo {
			return
		}
		if fn.Entry == next { // a tail call: the callee replaces its caller
			t.Stats.TailCalls++
			ret, depth := top.ret, top.c.Depth
			t.pop(th, now, EndTail)
			t.push(th, next, now, KindTail, ret)
			th.stack[len(th.stack)-1].c.Depth = depth
			return
		}
		// into a function further down the stack: longjmp, exception
		for i := len(th.stack) - 2; i >= 0 && i >= len(th.stack)-1-maxSearch; i-- {
			if th.stack[i].lo == fn.Entry {
				t.Stats.Unwinds++
				for len(th.stack) > i+1 {
					t.pop(th, now, EndUnwound)
				}
				return
			}
		}
	}
}

// ret handles a return to next.
func (t *Tracker) ret(th *thread, next, now uint64) {
	n := len(th.stack)
	if th.stack[n-1].ret == next {
		t.pop(th, now, EndReturn)
		return
	}
	for i := n - 2; i >= 0 && i >= n-1-maxSearch; i-- {
		if th.stack[i].ret == next { // returns that skipped frames
			t.Stats.UnmatchedReturns++
			for len(th.stack) > i+1 {
				t.pop(th, now, EndUnwound)
			}
			t.pop(th, now, EndReturn)
			return
		}
	}
	if n == 1 && th.stack[0].ret == 0 {
		// the root returned to a caller tracing never saw: it becomes the root
		t.pop(th, now, EndRootAbove)
		t.push(th, next, now, KindRoot, 0)
		// the new root started before tracing saw it; what ran so far
		// in the old root is not its own
		return
	}
	t.Stats.UnmatchedReturns++
	if n > 1 {
		t.pop(th, now, EndUnwound)
		return
	}
	t.pop(th, now, EndRootAbove)
	t.push(th, next, now, KindRoot, 0)
}

// Disabled reports that tracing stopped after the current thread's last
// block (a system call in a user-only trace, a filter) at time now.
func (t *Tracker) Disabled(now uint64) {
	if th := t.cur; th != nil {
		th.disabled, th.disabledTime = true, now
		th.resumeIP = th.pEnd + uint64(th.pLen)
	}
}

// Enabled reports that tracing resumed at ip at time now. When ip is not
// where the last instruction (a system call) would return, the part in
// between is a gap; the stack is kept.
func (t *Tracker) Enabled(ip, now uint64) {
	th := t.cur
	if th == nil || !th.disabled {
		return
	}
	th.disabled = false
	if th.pending && ip != th.resumeIP && th.pClass != intelpt.ClassOther {
		t.gap(th, th.disabledTime, now, "tracing disabled")
	}
}

// Gap reports lost trace of the current thread (overflow, decode error):
// the open calls end there (EndGap) and a new stack starts at the next
// block.
func (t *Tracker) Gap(begin, end uint64, reason string) {
	th := t.cur
	if th == nil {
		return
	}
	t.gap(th, begin, end, reason)
	for len(th.stack) > 0 {
		t.pop(th, begin, EndGap)
	}
	th.pending = false
}

func (t *Tracker) gap(th *thread, begin, end uint64, reason string) {
	t.Stats.Gaps++
	if t.OnGap != nil {
		t.OnGap(&Gap{Thread: th.tid, Begin: begin, End: end, Insn: th.insns, Reason: reason})
	}
}

// Finish ends every open call at time now (the end of the trace; 0: each
// thread's last time).
func (t *Tracker) Finish(now uint64) {
	for _, th := range t.threads {
		now := max(now, th.pTime)
		if th.pending && th.pClass == intelpt.ClassReturn && len(th.stack) > 0 {
			// the last block's return: its target is unknown, the call ended
			th.pending = false
			t.pop(th, now, EndReturn)
		}
		for len(th.stack) > 0 {
			t.pop(th, now, EndTraceEnd)
		}
	}
}
