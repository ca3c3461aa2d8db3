//go:build linux

package ptsynth

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/symtab"
	"github.com/iotap/iotap/intelpt/x86"
)

// BuildProg compiles the calls test program (intelpt/testdata/calls/prog.c)
// as a PIE linked against libc.
func buildProg(t testing.TB, dir string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	out := filepath.Join(dir, "prog")
	b, err := exec.Command("gcc", "-fPIE", "-pie", "-O1", "-foptimize-sibling-calls", "-fno-inline", "-fno-builtin",
		"-o", out, "../../testdata/calls/prog.c").CombinedOutput()
	if err != nil {
		t.Fatalf("gcc: %v: %s", err, b)
	}
	return out
}

// AtSymbol returns a start function for Record: the run-time address of
// the function name of the program at path.
func atSymbol(path, name string) func(int, []Map) (uint64, error) {
	return func(pid int, maps []Map) (uint64, error) {
		tab, err := symtab.Open(path, symtab.Options{})
		if err != nil {
			return 0, err
		}
		var link uint64
		for _, s := range tab.Symbols() {
			if s.Name == name {
				link = s.Addr
			}
		}
		if link == 0 {
			return 0, fmt.Errorf("no %s in %s", name, path)
		}
		for _, m := range maps {
			if m.Path != path {
				continue
			}
			if a, ok := tab.RunAddr(m.Start, m.Off, m.End-m.Start, link); ok {
				return a, nil
			}
		}
		return 0, fmt.Errorf("%s of %s is not mapped", name, path)
	}
}

type synth struct {
	prog string
	run  *Run
	enc  *Encoded
	perf []byte
	err  error
}

var (
	synthOnce sync.Once
	synthRes  synth
)

// synthesize records the test program from main once per test binary.
func synthesize(t *testing.T) *synth {
	t.Helper()
	synthOnce.Do(func() {
		s := &synthRes
		dir, err := makeTempDir()
		if err != nil {
			s.err = err
			return
		}
		s.prog = buildProg(t, dir)
		s.run, s.err = Record(s.prog, nil, atSymbol(s.prog, "main"), 0)
		if s.err != nil {
			return
		}
		s.enc, s.err = Encode(s.run, X86, Options{PSBPeriod: 256})
		if s.err != nil {
			return
		}
		s.perf = PerfData(s.run, s.enc, PerfOptions{CPU: 0})
	})
	if synthRes.err != nil {
		t.Fatal(synthRes.err)
	}
	return &synthRes
}

// TestFlowReproducesTrueSequence: the perf.data synthesized from a
// single-stepped run of a real PIE program, decoded with iotap's
// instruction flow decoder over an image built from the real ELF files
// that the perf.data's sideband names, gives exactly the instructions
// the program ran (libc's AVX2/EVEX string functions included).
func TestFlowReproducesTrueSequence(t *testing.T) {
	s := synthesize(t)
	if s.run.ExitStatus == 0 {
		t.Errorf("exit status 0: the program did not run to its end")
	}
	t.Logf("%d instructions, %d bytes of PT (%d PSB, %d TNT bits, %d TIP, %d compressed returns, %d PGD, %d PGE)",
		len(s.run.Steps), len(s.enc.PT), s.enc.PSBs, s.enc.TNTBits, s.enc.TIPs, s.enc.CompressedRets, s.enc.PGDs, s.enc.PGEs)

	pt, err := intelpt.PerfDataPT(s.perf)
	if err != nil {
		t.Fatal(err)
	}
	if len(pt.Streams) != 1 {
		t.Fatalf("%d streams", len(pt.Streams))
	}
	sb, err := intelpt.PerfSideband(s.perf)
	if err != nil || sb.Lossy() {
		t.Fatalf("sideband: %v %s", err, sb.LossSummary())
	}
	proc := sb.AddressSpaces().Process(int32(s.run.PID))
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
	n := min(len(ips), len(s.run.Steps))
	for i := 0; i < n; i++ {
		if ips[i] != s.run.Steps[i].IP {
			t.Fatalf("instruction %d: decoded %#x, true %#x", i, ips[i], s.run.Steps[i].IP)
		}
	}
	if len(ips) != len(s.run.Steps) {
		t.Fatalf("decoded %d instructions, the program ran %d", len(ips), len(s.run.Steps))
	}
	// libc's vector code ran: VEX/EVEX instructions in libc.so.6 (its
	// AVX2/EVEX string functions; Debian's libc has no .symtab to name them).
	enc := map[string]int{}
	for _, st := range s.run.Steps {
		m := proc.Lookup(st.IP)
		if m == nil || filepath.Base(m.File) != "libc.so.6" {
			continue
		}
		var in x86.Inst
		if x86.Decode(s.run.Bytes(st.IP), x86.Mode64, &in) == nil && (in.Encoding == x86.VEX || in.Encoding == x86.EVEX) {
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

func makeTempDir() (string, error) { return os.MkdirTemp("", "ptsynth") }
