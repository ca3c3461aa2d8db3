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
