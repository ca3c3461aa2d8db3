package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/ptsynth"
)

// TestPTFlowPerfDataLoss: 'pt flow perf.data' says what the perf.data lost
// as 'pt stats' and 'pt calls' do (exit 3 unless --allow-loss, then a
// warning): a file cut inside its AUXTRACE data, and an AUX record whose
// flags say the kernel truncated the trace. It exited 0 and said nothing.
func TestPTFlowPerfDataLoss(t *testing.T) {
	dir := t.TempDir()
	const base = 0x401000
	code := filepath.Join(dir, "loop.bin")
	if err := os.WriteFile(code, []byte{0x75, 0xfe}, 0o600); err != nil { // jne .
		t.Fatal(err)
	}
	var enc intelpt.Encoder
	for psb := 0; psb < 8; psb++ {
		enc.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
		enc.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCSext48, Payload: base})
		enc.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
		if psb == 0 {
			enc.Encode(intelpt.Packet{Kind: intelpt.KindTIPPGE, IPC: intelpt.IPCSext48, Payload: base})
		}
		for range 200 {
			enc.Encode(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 6, Payload: 0x3f})
		}
	}
	run := &ptsynth.Run{PID: 1000, Comm: "loop", Maps: []ptsynth.Map{{Start: base, End: base + 2, Perm: "r-xp", Path: code}}}
	whole := ptsynth.PerfData(run, &ptsynth.Encoded{PT: enc.Bytes(), TSC: []uint64{10, 1 << 56}}, ptsynth.PerfOptions{PerThread: true})

	// the records of the data section: the AUXTRACE and the AUX after it
	le := binary.LittleEndian
	off, end := int(le.Uint64(whole[40:])), int(le.Uint64(whole[40:])+le.Uint64(whole[48:]))
	auxtrace, aux := -1, -1
	for off+8 <= end {
		typ, size := le.Uint32(whole[off:]), int(le.Uint16(whole[off+6:]))
		switch {
		case typ == 71:
			auxtrace = off
			off += int(le.Uint64(whole[off+8:]))
		case typ == 11 && aux < 0:
			aux = off
		}
		if size == 0 {
			t.Fatalf("record size 0 at %#x", off)
		}
		off += size
	}
	if auxtrace < 0 || aux < 0 {
		t.Fatalf("no AUXTRACE (%d) or AUX (%d) record", auxtrace, aux)
	}
	flagged := append([]byte(nil), whole...)
	le.PutUint64(flagged[aux+8+16:], 1) // PERF_AUX_FLAG_TRUNCATED

	for _, c := range []struct {
		name string
		data []byte
		loss string
	}{
		{"whole.perf.data", whole, ""},
		{"cut.perf.data", whole[:auxtrace+48+len(enc.Bytes())/2], "file truncated"},
		{"flagged.perf.data", flagged, "AUX records with lost trace"},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, c.data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, allow := range []bool{false, true} {
			args := []string{"pt", "flow", "--quiet", path}
			if allow {
				args = []string{"pt", "flow", "--quiet", "--allow-loss", path}
			}
			_, stderr, code := runIotap(t, args...)
			switch {
			case c.loss == "":
				if code != 0 || stderr != "" {
					t.Errorf("%s: exit %d, stderr %q: want 0 and nothing", c.name, code, stderr)
				}
			case !allow:
				if code != exitDataLost || !strings.Contains(stderr, c.loss) || !strings.HasPrefix(stderr, "iotap: pt flow: ") {
					t.Errorf("%s: exit %d, stderr %q: want %d, 'iotap: pt flow: ... %s'", c.name, code, stderr, exitDataLost, c.loss)
				}
			default:
				if code != 0 || !strings.HasPrefix(stderr, "iotap: warning: pt flow: ") || !strings.Contains(stderr, c.loss) {
					t.Errorf("%s --allow-loss: exit %d, stderr %q: want 0 and a warning %s", c.name, code, stderr, fmt.Sprint(c.loss))
				}
			}
		}
	}
}

// TestPTCutTrace: a raw trace cut inside a packet is loss for pt flow and
// pt calls, as for pt dump (exit 3 unless --allow-loss, then a warning),
// named with the file and the offset of the packet cut: a PSB then 4
// bytes of a TSC (20 bytes), and libipt's call_direct-ret_compressed cut
// 1 byte into its last FUP (at 0x1c in ptdump's listing), after the 3
// instructions ptxed lists. Both commands exited 0 and said nothing; the
// listing is the same with --allow-loss.
func TestPTCutTrace(t *testing.T) {
	const lib = "../../intelpt/testdata/libipt/"
	full, err := os.ReadFile(lib + "call_direct-ret_compressed.pt")
	tsc, err2 := os.ReadFile(lib + "cbr-tsc-tma-mtc-cyc.pt")
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	dir := t.TempDir()
	code := lib + "call_direct-ret_compressed.bin:0x100000"
	for _, c := range []struct {
		name  string
		trace []byte
		loss  string
		insns string // the start of pt flow's listing
	}{
		{"psb-tsc.pt", append(append([]byte(nil), tsc[:16]...), tsc[0x16:0x16+4]...), "trace ends inside a packet at offset 0x10 (last 4 bytes)", ""},
		{"mid.pt", full[:0x1d], "trace ends inside a packet at offset 0x1c (last 1 bytes)", "0000000000100000\n0000000000100008\n0000000000100005\n"},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, c.trace, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []struct{ name, flow, prefix string }{
			{"pt flow", "--pt", "pt flow: " + path + ": "},
			{"pt calls", "", "pt calls: " + path + ": tid 1: "},
		} {
			args := []string{"pt", "calls", "--raw", code, path}
			if cmd.flow != "" {
				args = []string{"pt", "flow", "--raw", code, "--pt", path}
			}
			stdout, stderr, exit := runIotap(t, args...)
			want := "iotap: " + cmd.prefix + c.loss + " (--allow-loss to accept)\n"
			if exit != exitDataLost || !strings.HasSuffix(stderr, want) {
				t.Errorf("%s %s: exit %d, stderr %q: want %d, ending %q", cmd.name, c.name, exit, stderr, exitDataLost, want)
			}
			if cmd.flow != "" && !strings.HasPrefix(stdout, c.insns) {
				t.Errorf("%s %s: listing %q, want it to start %q", cmd.name, c.name, stdout, c.insns)
			}
			allowed, stderr, exit := runIotap(t, append(args[:2:2], append([]string{"--allow-loss"}, args[2:]...)...)...)
			if exit != 0 || allowed != stdout || !strings.HasSuffix(stderr, "iotap: warning: "+cmd.prefix+c.loss+"\n") {
				t.Errorf("%s --allow-loss %s: exit %d, stderr %q, same output %v", cmd.name, c.name, exit, stderr, allowed == stdout)
			}
		}
	}
}
