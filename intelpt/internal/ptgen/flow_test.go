package ptgen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// image returns p's code as an intelpt.Image.
func image(t testing.TB, p *Program) *intelpt.Image {
	im := intelpt.NewImage()
	any := intelpt.ASID{CR3: intelpt.AnyASID, VMCS: intelpt.AnyASID}
	if _, err := im.Add(p.Code, p.Base, any, "user"); err != nil {
		t.Fatal(err)
	}
	if p.Kernel != nil {
		if _, err := im.Add(p.Kernel, p.KernelBase, any, "kernel"); err != nil {
			t.Fatal(err)
		}
	}
	return im
}

// flowDecoder is what the instruction and block decoders have in common.
type flowDecoder interface {
	SyncForward() (int, error)
	Event(*intelpt.Event) (int, error)
	Offset() int64
}

// walk runs d over its trace the way ptxed does: events drained before
// each step, errors reported and decoding resumed at the next PSB. next
// decodes one instruction or block. It stops after maxSteps calls and
// reports whether it did.
func walk(d flowDecoder, next func() (int, error), maxSteps int) (errs []error, endless bool) {
	steps := 0
	lastSync := int64(-1)
	var ev intelpt.Event // one for the walk: passed through an interface, it escapes
	for {
		status, err := d.SyncForward()
		if err == io.EOF {
			return errs, false
		}
		for err == nil {
			for status&intelpt.StatusEventPending != 0 && err == nil {
				status, err = d.Event(&ev)
				if steps++; steps > maxSteps {
					return errs, true
				}
			}
			if err != nil || status&intelpt.StatusEOS != 0 {
				break
			}
			status, err = next()
			if steps++; steps > maxSteps {
				return errs, true
			}
		}
		if err == nil || err == io.EOF {
			return errs, false
		}
		var fe *intelpt.FlowError
		if !errors.As(err, &fe) {
			return append(errs, fmt.Errorf("not a *FlowError: %w", err)), false
		}
		errs = append(errs, err)
		if off := d.Offset(); off <= lastSync {
			return errs, false
		} else {
			lastSync = off
		}
	}
}

// ourInsns decodes p's trace with intelpt.InsnDecoder.
func ourInsns(t testing.TB, p *Program, trace []byte, maxSteps int) (ips []uint64, errs []error, endless bool) {
	d := intelpt.NewInsnDecoder(trace, intelpt.FlowConfig{Image: image(t, p)})
	var in intelpt.Insn
	errs, endless = walk(d, func() (int, error) {
		in = intelpt.Insn{}
		st, err := d.Next(&in)
		if in.Size != 0 {
			ips = append(ips, in.IP)
		}
		return st, err
	}, maxSteps)
	return ips, errs, endless
}

// ourBlocks decodes p's trace with intelpt.BlockDecoder into (ip, end_ip,
// ninsn) triples, the format of ptflow's block list.
func ourBlocks(t testing.TB, p *Program, trace []byte, maxSteps int) (words []uint64, errs []error, endless bool) {
	d := intelpt.NewBlockDecoder(trace, intelpt.FlowConfig{Image: image(t, p)})
	var b intelpt.Block
	errs, endless = walk(d, func() (int, error) {
		b = intelpt.Block{}
		st, err := d.Next(&b)
		if b.NInsn != 0 {
			words = append(words, b.IP, b.EndIP, uint64(b.NInsn))
		}
		return st, err
	}, maxSteps)
	return words, errs, endless
}

var (
	genMu    sync.Mutex
	genCache = map[Config]*Program{}
)

// generate is Generate with the programs cached for the package's tests
// (callers must not modify the Program).
func generate(t testing.TB, cfg Config) *Program {
	genMu.Lock()
	defer genMu.Unlock()
	if p := genCache[cfg]; p != nil {
		return p
	}
	p, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	genCache[cfg] = p
	return p
}

// flowSeeds returns the configurations of the flow tests: shorter runs in
// -short mode.
func flowSeeds() []Config {
	s := append([]Config(nil), seeds...)
	if testing.Short() {
		for i := range s {
			s[i].Insns /= 10
		}
	}
	return s
}

func noErrors(t *testing.T, who string, errs []error) {
	t.Helper()
	for i, err := range errs {
		if i == 5 {
			t.Errorf("%s: ... %d errors in all", who, len(errs))
			break
		}
		t.Errorf("%s: %v", who, err)
	}
}

// TestInsnDecoderGroundTruth: iotap's instruction decoder reconstructs
// exactly the instructions that ran (which libipt's pt_insn_next also does,
// see TestLibiptInsnDecoder), on every seed.
func TestInsnDecoderGroundTruth(t *testing.T) {
	groundTruth(t, "InsnDecoder", ourInsns, compareIPs)
}

// TestBlockDecoderGroundTruth: iotap's block decoder covers exactly the
// instructions that ran, block by block.
func TestBlockDecoderGroundTruth(t *testing.T) {
	groundTruth(t, "BlockDecoder", ourBlocks, checkBlocks)
}

func groundTruth(t *testing.T, name string,
	decode func(testing.TB, *Program, []byte, int) ([]uint64, []error, bool),
	check func(*testing.T, string, *Program, []uint64)) {
	for _, cfg := range flowSeeds() {
		p := generate(t, cfg)
		who := fmt.Sprintf("seed %d: %s", cfg.Seed, name)
		limit := 4*p.Count + 1000
		words, errs, endless := decode(t, p, p.Trace, limit)
		if endless {
			t.Fatalf("%s: no end after %d steps", who, limit)
		}
		noErrors(t, who, errs)
		check(t, who, p, words)
		t.Logf("%s == truth, %d instructions", who, len(p.IPs))
	}
}

// TestFlowLibiptSameRun puts the three side by side on the same runs: the
// instruction lists of iotap and pt_insn_next are equal to each other and to
// the truth, and the block lists of iotap and pt_blk_next both cover the
// truth. (Where a block ends is each decoder's choice: libipt's cached path
// ends blocks at direct calls and backward jumps, its first pass does not;
// so the block counts may differ.)
func TestFlowLibiptSameRun(t *testing.T) {
	bin := buildPTFlow(t)
	for _, cfg := range seeds[:4] {
		p := generate(t, cfg)
		ours, errs, _ := ourInsns(t, p, p.Trace, 4*p.Count+1000)
		noErrors(t, "InsnDecoder", errs)
		theirs := runPTFlow(t, bin, "insn", p)
		for i := 0; i < len(ours) && i < len(theirs); i++ {
			if ours[i] != theirs[i] {
				t.Fatalf("seed %d: instruction %d: iotap %#x, pt_insn_next %#x", cfg.Seed, i, ours[i], theirs[i])
			}
		}
		compareIPs(t, fmt.Sprintf("seed %d: InsnDecoder", cfg.Seed), p, ours)
		compareIPs(t, fmt.Sprintf("seed %d: pt_insn_next", cfg.Seed), p, theirs)

		ourBlk, errs, _ := ourBlocks(t, p, p.Trace, 4*p.Count+1000)
		noErrors(t, "BlockDecoder", errs)
		theirBlk := runPTFlow(t, bin, "block", p)
		checkBlocks(t, fmt.Sprintf("seed %d: BlockDecoder", cfg.Seed), p, ourBlk)
		checkBlocks(t, fmt.Sprintf("seed %d: pt_blk_next", cfg.Seed), p, theirBlk)
		t.Logf("seed %d: iotap == pt_insn_next == truth (%d instructions); blocks cover the truth: iotap %d blocks, pt_blk_next %d",
			cfg.Seed, len(ours), len(ourBlk)/3, len(theirBlk)/3)
	}
}

// fuzzProgram is the program of the flow fuzz target: small code, a short
// run, the features chosen by bits.
func fuzzProgram(seed uint64, bits uint8) (*Program, error) {
	return Generate(Config{Seed: seed, Insns: 2000, CodeSize: 4096 << (bits & 3), PSBPeriod: 256 << (bits >> 2 & 3),
		Timing: bits&16 != 0, CYC: bits&32 != 0, Kernel: bits&64 != 0, FUPOnPTW: bits&128 != 0, EventRate: 5000})
}

// FuzzFlow runs both flow decoders over a generated image with the
// generated trace damaged by the fuzzer (bytes flipped at chosen offsets,
// the trace cut short) or replaced by the fuzzer's bytes: no panic, only
// *FlowError errors, and an end. The code has no cycle of branches that
// need no trace, so each step must consume trace or reach a branch that
// does within the image's size.
func FuzzFlow(f *testing.F) {
	f.Add(uint64(1), uint8(0), []byte{})
	f.Add(uint64(2), uint8(0xff), []byte{0, 40, 0x80})
	f.Add(uint64(3), uint8(0x55), []byte{0, 100, 0x01, 0, 7, 0x20, 9})
	f.Add(uint64(4), uint8(0xaa), []byte{1, 0, 0xff, 0, 3})
	f.Fuzz(func(t *testing.T, seed uint64, bits uint8, edit []byte) {
		p, err := fuzzProgram(seed%64, bits)
		if err != nil {
			t.Fatal(err)
		}
		trace := append([]byte(nil), p.Trace...)
		switch {
		case len(edit) > 0 && edit[0] == 0xff:
			trace = edit[1:] // the fuzzer's own bytes over the generated image
		default:
			for i := 0; i+2 < len(edit); i += 3 {
				pos := int(binary.BigEndian.Uint16(edit[i:])) % len(trace)
				trace[pos] ^= edit[i+2]
			}
			if len(edit)%3 != 0 {
				trace = trace[:int(edit[len(edit)-1])*len(trace)/256]
			}
		}
		limit := (8*len(trace) + 64) * (p.Stats.Instructions + 16)
		_, errs, endless := ourInsns(t, p, trace, limit)
		if endless {
			t.Fatalf("InsnDecoder: no end after %d steps", limit)
		}
		checkFlowErrors(t, errs)
		_, errs, endless = ourBlocks(t, p, trace, limit)
		if endless {
			t.Fatalf("BlockDecoder: no end after %d steps", limit)
		}
		checkFlowErrors(t, errs)
	})
}

func checkFlowErrors(t *testing.T, errs []error) {
	for _, err := range errs {
		var fe *intelpt.FlowError
		if !errors.As(err, &fe) {
			t.Fatalf("error is not a *FlowError: %v", err)
		}
	}
}

// TestFlowBadInputLikeLibipt damages the input in ways a user meets — a
// hole in the image (16 KiB of the code not loaded), a trace cut short —
// and checks that iotap's instruction decoder reconstructs exactly the
// instructions libipt's pt_insn_next does (both report each error and go
// on at the next PSB, as ptxed does), with as many errors.
func TestFlowBadInputLikeLibipt(t *testing.T) {
	bin := buildPTFlow(t)
	for _, seed := range []uint64{1, 2, 7} {
		p := generate(t, Config{Seed: seed, Insns: 300_000, Timing: true, Kernel: seed == 7})
		type testCase struct {
			name  string
			trace []byte
			hole  bool
			known bool
		}
		cases := []testCase{{"image with a hole", p.Trace, true, false}}
		for _, f := range []int{1, 2, 3, 4, 5} {
			cut := packetBoundary(p.Trace, len(p.Trace)*f/6)
			cases = append(cases,
				testCase{fmt.Sprintf("trace cut at a packet boundary (%#x)", cut), p.Trace[:cut], false, false},
				testCase{fmt.Sprintf("trace cut inside a packet (%#x)", cut+1), p.Trace[:cut+1], false, true})
		}
		for _, c := range cases {
			q := *p
			q.Trace = c.trace
			if c.hole {
				// The code as two sections with 16 KiB between them
				// not loaded (the second one stands in for the
				// kernel section of the image).
				mid := len(p.Code) / 2
				q.Code = p.Code[:mid]
				q.KernelBase, q.Kernel = p.Base+uint64(mid)+16<<10, p.Code[mid+16<<10:]
				if p.Kernel != nil {
					continue // the second section is taken by the kernel
				}
			}
			who := fmt.Sprintf("seed %d, %s", seed, c.name)
			ours, errs, endless := ourInsns(t, &q, q.Trace, 4*p.Count+1000)
			if endless {
				t.Fatalf("%s: no end", who)
			}
			theirs, theirErrs := runPTFlowErrs(t, bin, "insn", &q)
			for i := 0; i < len(ours) && i < len(theirs); i++ {
				if ours[i] != theirs[i] {
					t.Fatalf("%s: instruction %d: iotap %#x, pt_insn_next %#x", who, i, ours[i], theirs[i])
				}
			}
			if len(errs) != len(theirErrs) || (c.hole && len(errs) == 0) {
				t.Errorf("%s: iotap %d errors, libipt %d", who, len(errs), len(theirErrs))
			}
			// The error reports may differ in their offset and IP
			// (reported): log the first ones side by side.
			for i := 0; i < len(errs) && i < len(theirErrs) && i < 2; i++ {
				t.Logf("%s: iotap: %v; libipt: %s", who, errs[i], theirErrs[i])
			}
			if len(ours) != len(theirs) {
				if c.known && len(ours) < len(theirs) {
					// Known difference (reported): when the last
					// packet is cut, libipt still follows the
					// packet before it to the next instruction that
					// needs trace; iotap stops at that packet.
					t.Logf("%s: KNOWN DIFFERENCE: iotap stops %d instructions before pt_insn_next (%d)", who, len(theirs)-len(ours), len(theirs))
					continue
				}
				t.Fatalf("%s: iotap %d instructions, pt_insn_next %d", who, len(ours), len(theirs))
			}
			t.Logf("%s: %d instructions, %d errors, the same from both", who, len(ours), len(errs))
		}
	}
}

// packetBoundary returns the offset of the first packet that starts at or
// after off.
func packetBoundary(trace []byte, off int) int {
	d := intelpt.NewDecoder(trace, intelpt.Config{})
	var pk intelpt.Packet
	for d.Offset() < int64(off) {
		if d.Next(&pk) != nil {
			break
		}
	}
	return int(d.Offset())
}

// TestBlockDecoderPolicies: decoders with --block:end-on-call and
// --block:end-on-jump share one image (and so its block cache, which
// follows direct jumps and calls only for decoders that do not end blocks
// there) with decoders without them, one after the other. Each covers the
// truth, and a block of an end-on-call (end-on-jump) decoder has no call
// (jump) but its last instruction; the ground truth's program says which
// instructions are calls and jumps. Each block's EndSize and EndDirect
// are the truth's.
func TestBlockDecoderPolicies(t *testing.T) {
	cfg := flowSeeds()[0]
	p := generate(t, cfg)
	im := image(t, p)
	flags := []intelpt.FlowFlags{{}, {EndOnCall: true}, {}, {EndOnJump: true}, {EndOnCall: true, EndOnJump: true}, {}}
	blocks := make([]int, len(flags))
	for i, fl := range flags {
		d := intelpt.NewBlockDecoder(p.Trace, intelpt.FlowConfig{Image: im, Flags: fl})
		var b intelpt.Block
		var words []uint64
		errs, endless := walk(d, func() (int, error) {
			b = intelpt.Block{}
			st, err := d.Next(&b)
			if b.NInsn != 0 {
				words = append(words, b.IP, b.EndIP, uint64(b.NInsn))
				// the last instruction as the truth knows it
				kind := p.KindAt(b.EndIP)
				direct := kind == KindJcc || kind == KindJmp || kind == KindCall || kind == KindCallNext
				if int(b.EndSize) != p.Len(b.EndIP) || b.EndDirect != direct {
					t.Fatalf("%+v: block %#x-%#x: last instruction of %d bytes, direct %v; truth %d bytes, %v", fl, b.IP, b.EndIP, b.EndSize, b.EndDirect, p.Len(b.EndIP), kind)
				}
			}
			return st, err
		}, 4*p.Count+1000)
		who := fmt.Sprintf("seed %d, %+v", cfg.Seed, fl)
		if endless {
			t.Fatalf("%s: no end", who)
		}
		noErrors(t, who, errs)
		checkBlocks(t, who, p, words)
		k := 0
		for w := 0; w+2 < len(words); w += 3 {
			n := int(words[w+2])
			for i := k; i < k+n-1; i++ {
				switch kind := p.KindAt(p.IPs[i]); {
				case fl.EndOnCall && kind == KindCall, fl.EndOnJump && kind == KindJmp:
					t.Fatalf("%s: block %#x-%#x goes on past the %v at %#x", who, words[w], words[w+1], kind, p.IPs[i])
				}
			}
			k += n
		}
		blocks[i] = len(words) / 3
	}
	if blocks[0] != blocks[2] || blocks[0] != blocks[5] {
		t.Errorf("default decoders give %d, %d and %d blocks", blocks[0], blocks[2], blocks[5])
	}
	if blocks[1] <= blocks[0] || blocks[3] <= blocks[0] || blocks[4] <= blocks[1] || blocks[4] <= blocks[3] {
		t.Errorf("blocks per policy %v: ending at calls or jumps must give more blocks", blocks)
	}
	t.Logf("blocks: default %d, end-on-call %d, end-on-jump %d, both %d", blocks[0], blocks[1], blocks[3], blocks[4])
}

// TestBlockDecoderCallsInBlock: with FlowFlags.CallsInBlock the blocks
// still cover the true instruction sequence; each direct call the block
// cache followed is reported (Block.CallRet, CallTarget, CallInsn) exactly
// where the truth has it, and every other call ends its block. Decoders
// of the other policies share the image in between (the cache entries of
// each policy are kept apart).
func TestBlockDecoderCallsInBlock(t *testing.T) {
	cfg := flowSeeds()[0]
	p := generate(t, cfg)
	im := image(t, p)
	flags := []intelpt.FlowFlags{{CallsInBlock: true}, {}, {CallsInBlock: true, EndOnJump: true}, {EndOnCall: true}, {CallsInBlock: true},
		{CallsInBlock: true, CondInBlock: true}, {EndOnJump: true}, {CondInBlock: true, EndOnJump: true},
		{CallsInBlock: true, TickEvents: true}, {CallsInBlock: true, CondInBlock: true, TickEvents: true}}
	nblocks := map[intelpt.FlowFlags]int{}
	for _, fl := range flags {
		d := intelpt.NewBlockDecoder(p.Trace, intelpt.FlowConfig{Image: im, Flags: fl})
		var b intelpt.Block
		var words []uint64
		type call struct{ at, ret, target uint64 }
		var inside []call
		k := 0
		errs, endless := walk(d, func() (int, error) {
			b = intelpt.Block{}
			st, err := d.Next(&b)
			if b.NInsn != 0 {
				words = append(words, b.IP, b.EndIP, uint64(b.NInsn))
				if b.CallRet != 0 {
					inside = append(inside, call{uint64(k + b.CallInsn - 1), b.CallRet, b.CallTarget})
				}
				k += b.NInsn
			}
			return st, err
		}, 4*p.Count+1000)
		who := fmt.Sprintf("seed %d, %+v", cfg.Seed, fl)
		if endless {
			t.Fatalf("%s: no end", who)
		}
		noErrors(t, who, errs)
		cond := fl.CondInBlock && !fl.TickEvents
		checkBlocksJcc(t, who, p, words, cond)
		nblocks[fl] = len(words) / 3
		if fl.CondInBlock {
			// a conditional branch inside a block saves a block; with
			// TickEvents it always ends one
			without := fl
			without.CondInBlock = false
			if n, ok := nblocks[without]; ok && (cond && n <= nblocks[fl] || !cond && n != nblocks[fl]) {
				t.Fatalf("%s: %d blocks, %d without CondInBlock", who, nblocks[fl], n)
			}
		}
		if !fl.CallsInBlock && len(inside) != 0 {
			t.Fatalf("%s: %d calls reported inside blocks", who, len(inside))
		}
		if !fl.CallsInBlock {
			continue
		}
		if len(inside) == 0 {
			t.Fatalf("%s: no call reported inside a block", who)
		}
		// every true direct call is the last instruction of its block or
		// the one reported inside it
		reported := map[uint64]bool{}
		for _, c := range inside {
			i := int(c.at)
			if p.KindAt(p.IPs[i]) != KindCall || p.IPs[i]+uint64(p.Len(p.IPs[i])) != c.ret || p.IPs[i+1] != c.target {
				t.Fatalf("%s: call inside a block at instruction %d: ret %#x target %#x; truth %v at %#x, then %#x", who, i, c.ret, c.target, p.KindAt(p.IPs[i]), p.IPs[i], p.IPs[i+1])
			}
			reported[c.at] = true
		}
		k = 0
		for w := 0; w+2 < len(words); w += 3 {
			n := int(words[w+2])
			for i := k; i < k+n-1; i++ {
				switch p.KindAt(p.IPs[i]) {
				case KindCall:
					if !reported[uint64(i)] {
						t.Fatalf("%s: block %#x-%#x goes on past the call at %#x without reporting it", who, words[w], words[w+1], p.IPs[i])
					}
				case KindJcc:
					if !cond {
						t.Fatalf("%s: block %#x-%#x goes on past the jcc at %#x", who, words[w], words[w+1], p.IPs[i])
					}
				case KindJmp:
					if fl.EndOnJump {
						t.Fatalf("%s: block %#x-%#x goes on past the jmp at %#x", who, words[w], words[w+1], p.IPs[i])
					}
				}
			}
			k += n
		}
		t.Logf("%s: %d blocks, %d calls inside", who, len(words)/3, len(inside))
	}
}
