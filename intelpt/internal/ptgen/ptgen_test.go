package ptgen

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// seeds are the configurations the ground-truth tests run: different code
// sizes, PSB periods and timing packets.
var seeds = []Config{
	{Seed: 1, Insns: 1_500_000},
	{Seed: 2, Insns: 1_000_000, Timing: true},
	{Seed: 3, Insns: 1_000_000, Timing: true, CYC: true, PSBPeriod: 2048},
	{Seed: 4, Insns: 1_000_000, CodeSize: 16 << 10, PSBPeriod: 8192},
	{Seed: 5, Insns: 1_000_000, CodeSize: 4 << 20, EventRate: 2000},
	{Seed: 6, Insns: 500_000, Base: 0xffffffff80000000 - 0x100000, Timing: true, FUPOnPTW: true},
	{Seed: 7, Insns: 1_000_000, Kernel: true, Timing: true, EventRate: 1000},
	{Seed: 8, Insns: 1_000_000, Kernel: true, CYC: true, FUPOnPTW: true, PSBPeriod: 1024},
	{Seed: 9, Insns: 1_000_000, Overflows: 50, Timing: true},
	{Seed: 10, Insns: 1_000_000, Overflows: 200, Kernel: true, CYC: true},
}

func TestDeterministic(t *testing.T) {
	sum := func() [32]byte {
		p, err := Generate(Config{Seed: 42, Insns: 100_000, Timing: true, CYC: true})
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		h.Write(p.Code)
		h.Write(p.Kernel)
		h.Write(p.Trace)
		for _, ip := range p.IPs {
			binary.Write(h, binary.LittleEndian, ip)
		}
		return [32]byte(h.Sum(nil))
	}
	if a, b := sum(), sum(); a != b {
		t.Fatalf("same seed, different output: %x, %x", a, b)
	}
}

// TestCoverage checks that a run exercises what the issue asks for: TNT
// short and long, every IP compression, compressed and uncompressed
// returns, return-stack overflow, PSB+, TIP.PGE/PGD, FUP, timing packets
// and every encoding family.
func TestCoverage(t *testing.T) {
	p, err := Generate(Config{Seed: 7, Insns: 1_000_000, Timing: true, CYC: true, Base: 0x7fff00000000 - 0x10000})
	if err != nil {
		t.Fatal(err)
	}
	pk, err := Generate(Config{Seed: 7, Insns: 200_000, Kernel: true, EventRate: 1000})
	if err != nil {
		t.Fatal(err)
	}
	po, err := Generate(Config{Seed: 7, Insns: 200_000, Overflows: 100})
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, g := range po.Gaps {
		lost += g.Lost
	}
	if len(po.Gaps) == 0 || po.Stats.Packets[intelpt.KindOVF] != len(po.Gaps) || len(po.IPs)+lost != po.Count {
		t.Errorf("overflows: %d gaps, %d OVF packets, %d + %d lost instructions of %d", len(po.Gaps), po.Stats.Packets[intelpt.KindOVF], len(po.IPs), lost, po.Count)
	}
	if pk.Stats.Executed[KindFarRet] == 0 || pk.Stats.Executed[KindSyscall] == 0 {
		t.Errorf("kernel tracing: %d sysret/iret, %d syscalls", pk.Stats.Executed[KindFarRet], pk.Stats.Executed[KindSyscall])
	}
	s := &p.Stats
	for _, k := range []intelpt.Kind{intelpt.KindPSB, intelpt.KindPSBEnd, intelpt.KindTNT8, intelpt.KindTNT64,
		intelpt.KindTIP, intelpt.KindTIPPGE, intelpt.KindTIPPGD, intelpt.KindFUP, intelpt.KindModeExec,
		intelpt.KindTSC, intelpt.KindTMA, intelpt.KindCBR, intelpt.KindMTC, intelpt.KindCYC} {
		if s.Packets[k] == 0 {
			t.Errorf("no %v packet", k)
		}
	}
	for _, ipc := range []intelpt.IPC{intelpt.IPCSuppressed, intelpt.IPCUpdate16, intelpt.IPCUpdate32,
		intelpt.IPCSext48, intelpt.IPCUpdate48, intelpt.IPCFull} {
		if s.IPC[ipc] == 0 {
			t.Errorf("no IP packet with compression %d", ipc)
		}
	}
	if s.CompRet == 0 || s.UncompRet == 0 || s.RetOverflow == 0 {
		t.Errorf("returns: %d compressed, %d uncompressed, %d return-stack overflows", s.CompRet, s.UncompRet, s.RetOverflow)
	}
	for k, n := range s.Executed {
		if n == 0 && Kind(k) != KindFarRet {
			t.Errorf("no %v instruction executed", Kind(k))
		}
	}
	for c, n := range s.ExecClass {
		if n == 0 {
			t.Errorf("no %v instruction executed", Class(c))
		}
	}
	if p.Count != 1_000_000 || len(p.IPs) != p.Count {
		t.Errorf("%d instructions, %d IPs", p.Count, len(p.IPs))
	}
	if testing.Verbose() {
		t.Log("\n" + s.String())
	}
}

// TestObjdumpBoundaries disassembles the code with GNU objdump and checks
// that it finds an instruction at exactly the offsets the generator wrote,
// with the length the generator knows.
func TestObjdumpBoundaries(t *testing.T) {
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Skip("objdump not found (apt binutils)")
	}
	for _, seed := range []uint64{1, 2, 3} {
		p, err := Generate(Config{Seed: seed, Insns: 1, CodeSize: 256 << 10, Kernel: seed == 1})
		if err != nil {
			t.Fatal(err)
		}
		checkObjdump(t, p, p.Base, p.Code)
		if p.Kernel != nil {
			checkObjdump(t, p, p.KernelBase, p.Kernel)
		}
	}
}

func checkObjdump(t *testing.T, p *Program, base uint64, code []byte) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "code.bin")
	if err := os.WriteFile(f, code, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("objdump", "-D", "-b", "binary", "-m", "i386:x86-64", "-w", f).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := p.Boundaries(base)
	got := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// "   1f3a:\t62 f1 7c 48 28 c1 \tvmovaps %zmm1,%zmm0"
		line := sc.Text()
		colon := strings.IndexByte(line, ':')
		if colon < 0 || !strings.HasPrefix(line, " ") {
			continue
		}
		off, err := strconv.ParseUint(strings.TrimSpace(line[:colon]), 16, 32)
		if err != nil {
			continue
		}
		fields := strings.SplitN(line[colon+1:], "\t", 3)
		if len(fields) < 3 {
			continue
		}
		if got >= len(want) || uint32(off) != want[got] {
			w := want[min(got, len(want)-1)]
			t.Fatalf("%#x: objdump has an instruction at %#x, the generator at %#x: %s\n%s", base, off, w, line, context(p, base+uint64(w)))
		}
		if strings.Contains(fields[2], "(bad)") {
			t.Fatalf("%#x: objdump cannot decode %s", base, line)
		}
		got++
	}
	if got != len(want) {
		t.Fatalf("%#x: objdump listed %d instructions, the generator wrote %d", base, got, len(want))
	}
	t.Logf("%#x: %d instructions at the same offsets as objdump's", base, got)
}

func context(p *Program, ip uint64) string {
	in := p.find(ip)
	if in == nil {
		return ""
	}
	var b strings.Builder
	i := 0
	for i < len(p.insns) && &p.insns[i] != in {
		i++
	}
	for j := max(0, i-2); j <= i+1 && j < len(p.insns); j++ {
		in := &p.insns[j]
		fmt.Fprintf(&b, "%#x %v %v\n", in.addr, in.kind, in.class)
	}
	return b.String()
}

// buildPTFlow compiles bench/ptflow (a driver for libipt's pt_insn_next and
// pt_blk_next). It skips in -short mode and when gcc or libipt-dev are
// missing.
func buildPTFlow(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("ground truth against libipt skipped in -short mode")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found: the libipt tests need gcc and libipt-dev")
	}
	if _, err := os.Stat("/usr/include/intel-pt.h"); err != nil {
		t.Skip("libipt-dev not installed (apt-get install libipt-dev)")
	}
	bin := filepath.Join(t.TempDir(), "ptflow")
	out, err := exec.Command("gcc", "-O2", "-Wall", "-o", bin, "../../../bench/ptflow/ptflow.c", "-lipt").CombinedOutput()
	if err != nil {
		t.Fatalf("building ptflow: %v\n%s", err, out)
	}
	return bin
}

// writeFiles writes p's code and trace to a temporary directory and returns
// the trace's path and the --raw arguments (FILE:ADDR) of the code.
func writeFiles(t testing.TB, p *Program) (trace string, raws []string) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	trace = write("trace.pt", p.Trace)
	raws = append(raws, fmt.Sprintf("%s:%#x", write("user.bin", p.Code), p.Base))
	if p.Kernel != nil {
		raws = append(raws, fmt.Sprintf("%s:%#x", write("kernel.bin", p.Kernel), p.KernelBase))
	}
	return trace, raws
}

func runPTFlow(t *testing.T, bin, decoder string, p *Program) []uint64 {
	t.Helper()
	words, errs := runPTFlowErrs(t, bin, decoder, p)
	if len(errs) > 0 {
		t.Errorf("libipt %s decoder reported errors:\n%s", decoder, strings.Join(errs[:min(len(errs), 10)], "\n"))
	}
	return words
}

// runPTFlowErrs runs ptflow's list and returns its words and the error
// lines it printed.
func runPTFlowErrs(t *testing.T, bin, decoder string, p *Program) ([]uint64, []string) {
	t.Helper()
	trace, raws := writeFiles(t, p)
	var stderr bytes.Buffer
	cmd := exec.Command(bin, append([]string{decoder, "list", trace}, raws...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ptflow: %v\n%s", err, stderr.Bytes())
	}
	var errs []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "error ") {
			errs = append(errs, l)
		}
	}
	words := make([]uint64, len(out)/8)
	for i := range words {
		words[i] = binary.LittleEndian.Uint64(out[8*i:])
	}
	return words, errs
}

// compareIPs reports the first difference of got from the true sequence.
func compareIPs(t *testing.T, who string, p *Program, got []uint64) {
	t.Helper()
	want := p.IPs
	for i := 0; i < len(want) && i < len(got); i++ {
		if got[i] != want[i] {
			t.Fatalf("%s: instruction %d: IP %#x, truth %#x (previous %#x, %v)", who, i, got[i], want[i], want[max(i-1, 0)], p.KindAt(want[max(i-1, 0)]))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d instructions, truth %d", who, len(got), len(want))
	}
}

// TestLibiptInsnDecoder: libipt's pt_insn_next, given the generated code and
// trace, reconstructs exactly the instructions that ran. This is the proof
// that the generator writes what a CPU would (libipt being the reference
// decoder): every packet and its place follow the rules a decoder relies on.
func TestLibiptInsnDecoder(t *testing.T) {
	bin := buildPTFlow(t)
	for _, cfg := range seeds {
		p := generate(t, cfg)
		compareIPs(t, fmt.Sprintf("seed %d: pt_insn_next", cfg.Seed), p, runPTFlow(t, bin, "insn", p))
		t.Logf("seed %d: libipt's pt_insn_next == truth, %d instructions (%d executed, %d overflows), %d trace bytes", cfg.Seed, len(p.IPs), p.Count, len(p.Gaps), len(p.Trace))
	}
}

// TestLibiptBlockDecoder: the same with pt_blk_next. Each block must cover
// the next ninsn true instructions, contiguous in memory.
func TestLibiptBlockDecoder(t *testing.T) {
	bin := buildPTFlow(t)
	for _, cfg := range seeds {
		p := generate(t, cfg)
		words := runPTFlow(t, bin, "block", p)
		if len(words)%3 != 0 {
			t.Fatalf("seed %d: %d words", cfg.Seed, len(words))
		}
		checkBlocks(t, fmt.Sprintf("seed %d: pt_blk_next", cfg.Seed), p, words)
		t.Logf("seed %d: libipt's pt_blk_next == truth, %d blocks", cfg.Seed, len(words)/3)
	}
}

// checkBlocks checks blocks given as (ip, end_ip, ninsn) triples against the
// true sequence.
func checkBlocks(t *testing.T, who string, p *Program, words []uint64) {
	t.Helper()
	checkBlocksJcc(t, who, p, words, false)
}

// checkBlocksJcc is checkBlocks; with jcc, a block may also go on past a
// conditional branch (FlowFlags.CondInBlock), in the direction the truth
// took (the next instruction of the block is the truth's next one).
func checkBlocksJcc(t *testing.T, who string, p *Program, words []uint64, jcc bool) {
	t.Helper()
	k := 0
	for b := 0; b+2 < len(words); b += 3 {
		ip, end, n := words[b], words[b+1], int(words[b+2])
		if n == 0 || k+n > len(p.IPs) {
			t.Fatalf("%s: block %d (%#x-%#x, %d instructions) at instruction %d of %d", who, b/3, ip, end, n, k, len(p.IPs))
		}
		if p.IPs[k] != ip || p.IPs[k+n-1] != end {
			t.Fatalf("%s: block %d is %#x-%#x (%d instructions), truth %#x-%#x", who, b/3, ip, end, n, p.IPs[k], p.IPs[k+n-1])
		}
		for i := k; i < k+n-1; i++ {
			// Inside a block, each instruction leads to the next
			// without trace: a block may span direct jumps and calls.
			if jcc && p.KindAt(p.IPs[i]) == KindJcc {
				continue
			}
			if next, ok := p.Next(p.IPs[i]); !ok || next != p.IPs[i+1] {
				t.Fatalf("%s: block %d (%#x-%#x) goes on past %#x (%v), which needs trace to follow", who, b/3, ip, end, p.IPs[i], p.KindAt(p.IPs[i]))
			}
		}
		k += n
	}
	if k != len(p.IPs) {
		t.Fatalf("%s: blocks cover %d instructions, truth %d", who, k, len(p.IPs))
	}
}
