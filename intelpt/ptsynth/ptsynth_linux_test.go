//go:build linux

package ptsynth

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/calls"
	"github.com/iotap/iotap/intelpt/symtab"
	"github.com/iotap/iotap/intelpt/x86"
)

var (
	synthOnce sync.Once
	synthRes  *Synthesized
	synthErr  error
	synthDir  string // removed by TestMain
)

func TestMain(m *testing.M) {
	code := m.Run()
	if synthDir != "" {
		os.RemoveAll(synthDir)
	}
	os.Exit(code)
}

// synthesize records the test program from main once per test binary.
func synthesize(t *testing.T) *Synthesized {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	synthOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ptsynth")
		if err != nil {
			synthErr = err
			return
		}
		synthDir = dir
		synthRes, synthErr = SynthesizeProg(dir, 256)
	})
	if synthErr != nil {
		t.Fatal(synthErr)
	}
	return synthRes
}

// TestFlowReproducesTrueSequence: the perf.data synthesized from a
// single-stepped run of a real PIE program, decoded with iotap's
// instruction flow decoder over an image built from the real ELF files
// that the perf.data's sideband names, gives exactly the instructions
// the program ran (libc's AVX2/EVEX string functions included).
func TestFlowReproducesTrueSequence(t *testing.T) {
	s := synthesize(t)
	if s.Run.ExitStatus == 0 {
		t.Errorf("exit status 0: the program did not run to its end")
	}
	t.Logf("%d instructions, %d bytes of PT (%d PSB, %d TNT bits, %d TIP, %d compressed returns, %d PGD, %d PGE)",
		len(s.Run.Steps), len(s.Enc.PT), s.Enc.PSBs, s.Enc.TNTBits, s.Enc.TIPs, s.Enc.CompressedRets, s.Enc.PGDs, s.Enc.PGEs)

	pt, err := intelpt.PerfDataPT(s.Perf)
	if err != nil {
		t.Fatal(err)
	}
	if len(pt.Streams) != 1 {
		t.Fatalf("%d streams", len(pt.Streams))
	}
	sb, err := intelpt.PerfSideband(s.Perf)
	if err != nil || sb.Lossy() {
		t.Fatalf("sideband: %v %s", err, sb.LossSummary())
	}
	proc := sb.AddressSpaces().Process(int32(s.Run.PID))
	if proc == nil {
		t.Fatal("the sideband has no process")
	}
	im, unfound, _ := proc.LoadImage(&symtab.Finder{})
	for _, u := range unfound {
		if u.Mapping.File != "[vdso]" {
			t.Errorf("unfound mapping %v: %v", u.Mapping.String(), u.Err)
		}
	}
	ips, err := decodeIPs(pt.Streams[0].Data, im)
	if err != nil {
		t.Errorf("decode: %v", err)
	}
	n := min(len(ips), len(s.Run.Steps))
	for i := 0; i < n; i++ {
		if ips[i] != s.Run.Steps[i].IP {
			t.Fatalf("instruction %d: decoded %#x, true %#x", i, ips[i], s.Run.Steps[i].IP)
		}
	}
	if len(ips) != len(s.Run.Steps) {
		t.Fatalf("decoded %d instructions, the program ran %d", len(ips), len(s.Run.Steps))
	}
	// libc's vector code ran: VEX/EVEX instructions in libc.so.6 (its
	// AVX2/EVEX string functions; Debian's libc has no .symtab to name them).
	enc := map[string]int{}
	for _, st := range s.Run.Steps {
		m := proc.Lookup(st.IP)
		if m == nil || filepath.Base(m.File) != "libc.so.6" {
			continue
		}
		var in x86.Inst
		if x86.Decode(s.Run.Bytes(st.IP), x86.Mode64, &in) == nil && (in.Encoding == x86.VEX || in.Encoding == x86.EVEX) {
			enc[map[x86.Encoding]string{x86.VEX: "vex", x86.EVEX: "evex"}[in.Encoding]]++
		}
	}
	if len(enc) == 0 {
		t.Error("no VEX/EVEX instruction of libc ran")
	}
	t.Logf("VEX/EVEX instructions run in libc: %v", enc)
}

// decodeIPs runs the instruction flow decoder over trace.
func decodeIPs(trace []byte, im *intelpt.Image) ([]uint64, error) {
	d := intelpt.NewInsnDecoder(trace, intelpt.FlowConfig{Image: im})
	var ips []uint64
	status, err := d.SyncForward()
	for err == nil {
		for status&intelpt.StatusEventPending != 0 && err == nil {
			var ev intelpt.Event
			status, err = d.Event(&ev)
		}
		if err != nil || status&intelpt.StatusEOS != 0 {
			break
		}
		var in intelpt.Insn
		status, err = d.Next(&in)
		if in.Size != 0 {
			ips = append(ips, in.IP)
		}
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return ips, err
}

// TestFlow32BitProgram: the test program built with gcc -m32 (a 32-bit
// PIE against the 32-bit libc; gcc-multilib), single-stepped, encoded
// with MODE.Exec CS.D (32-bit code) and wrapped in a perf.data: the
// instruction flow decoder, over the image of the real 32-bit ELF files
// the sideband names (plus the 32-bit vDSO as the run mapped it, as perf
// keeps it in its build-id cache), gives exactly the instructions the
// program ran; and the calls, named from the 32-bit symbol tables, hold
// fib(10)'s 177 calls nested 10 deep.
func TestFlow32BitProgram(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	prog, err := BuildProgAs(dir, "prog32", "-m32")
	if err != nil {
		t.Skipf("no 32-bit toolchain (apt-get install gcc-multilib): %v", err)
	}
	run, err := Record(prog, nil, AtSymbol(prog, "main"), 0)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := Encode(run, X86Mode32, Options{PSBPeriod: 256, Mode32: true})
	if err != nil {
		t.Fatal(err)
	}
	perf := PerfData(run, enc, PerfOptions{PerThread: true})
	pt, err := intelpt.PerfDataPT(perf)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := intelpt.PerfSideband(perf)
	if err != nil {
		t.Fatal(err)
	}
	proc := sb.AddressSpaces().Process(int32(run.PID))
	// The 32-bit vDSO: the one this machine maps into 32-bit processes
	// (intelpt.ReadVDSO32, read from a stopped minimal i386 program) is
	// byte for byte the one the run mapped (read with ptrace), and the
	// image finds it by the build-id perf's table gives as [vdso32].
	var vdso *intelpt.Mapping
	for i := range proc.Mappings {
		if proc.Mappings[i].File == intelpt.VDSOName {
			vdso = &proc.Mappings[i]
		}
	}
	img32, id32, err := intelpt.ReadVDSO32()
	if err != nil || vdso == nil {
		t.Fatalf("32-bit vDSO: %v; mapping %v", err, vdso)
	}
	if !intelpt.IsVDSO32(vdso) || !bytes.Equal(vdso.BuildID, id32) || !bytes.Equal(run.Code[vdso.Start], img32[:len(run.Code[vdso.Start])]) {
		t.Errorf("the run's vDSO at %#x (build-id %x, %d bytes) is not this machine's 32-bit one (%x, %d bytes)",
			vdso.Start, vdso.BuildID, len(run.Code[vdso.Start]), id32, len(img32))
	}
	im, unfound, paths := proc.LoadImage(&symtab.Finder{})
	for _, u := range unfound {
		t.Errorf("unfound mapping %v: %v", u.Mapping.String(), u.Err)
	}
	libc32 := false
	for f := range paths {
		if filepath.Base(f) == "libc.so.6" && !strings.Contains(f, "x86_64") {
			libc32 = true
		}
	}
	if !libc32 {
		t.Errorf("no 32-bit libc among %v", paths)
	}
	ips, err := decodeIPs(pt.Streams[0].Data, im)
	if err != nil {
		t.Errorf("decode: %v", err)
	}
	for i := 0; i < min(len(ips), len(run.Steps)); i++ {
		if ips[i] != run.Steps[i].IP {
			t.Fatalf("instruction %d: decoded %#x, true %#x", i, ips[i], run.Steps[i].IP)
		}
	}
	if len(ips) != len(run.Steps) || len(ips) < 5000 {
		t.Fatalf("decoded %d instructions, the program ran %d", len(ips), len(run.Steps))
	}
	// the calls, with names
	sym := calls.NewProcSymbolizer(proc, paths, symtab.Options{})
	fib, maxDepth, mainDepth := 0, 0, -1
	vdsoCalls := map[string]int{}
	tr := calls.NewTracker(func(c *calls.Call) {
		if c.Entry >= vdso.Start && c.Entry < vdso.End {
			vdsoCalls[c.Func]++
		}
		switch c.Func {
		case "fib":
			fib++
			maxDepth = max(maxDepth, c.Depth)
		case "main":
			mainDepth = c.Depth
		}
	})
	tr.Thread(int32(run.PID), sym)
	if err := calls.Decode(pt.Streams[0].Data, intelpt.FlowConfig{Image: im}, tr, nil); err != nil {
		t.Fatal(err)
	}
	tr.Finish(0)
	if fib != 177 || mainDepth < 0 || maxDepth-mainDepth != 10 {
		t.Errorf("fib: %d calls, %d deep below main (depth %d); want 177, 10", fib, maxDepth-mainDepth, mainDepth)
	}
	// the 32-bit libc's clock_gettime (the 64-bit time one) and its
	// system calls (sysenter) run in the vDSO, named from its .dynsym
	if vdsoCalls["__vdso_clock_gettime64"] == 0 || vdsoCalls["__kernel_vsyscall"] == 0 {
		t.Errorf("calls into the 32-bit vDSO: %v, want __vdso_clock_gettime64 and __kernel_vsyscall", vdsoCalls)
	}
	t.Logf("%d instructions of 32-bit code, %d fib calls, vDSO calls %v", len(ips), fib, vdsoCalls)
}
