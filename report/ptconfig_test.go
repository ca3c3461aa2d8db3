package report

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// TestAnalyzePTConfigDefault: without PTOptions.Config, a raw buffer of
// an 'iotap pt capture' directory is timed with the parameters its
// capture.json recorded (intelpt.ConfigOf), as 'iotap report' times it;
// without them the MTC/CYC timing of libipt's cbr-tsc-tma-mtc-cyc test
// gives other statistics.
func TestAnalyzePTConfigDefault(t *testing.T) {
	trace, err := os.ReadFile("../intelpt/testdata/libipt/cbr-tsc-tma-mtc-cyc.pt")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	buf := filepath.Join(dir, "cpu0.pt")
	sc := `{"tool":"iotap","mtc_freq":8,"nom_freq":4,"cpuid_0x15_eax":1,"cpuid_0x15_ebx":4,"buffers":[{"file":"cpu0.pt"}]}`
	if err := os.WriteFile(filepath.Join(dir, intelpt.CaptureInfoFile), []byte(sc), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(buf, trace, 0o600); err != nil {
		t.Fatal(err)
	}
	analyze := func(o PTOptions) intelpt.Stats {
		p, err := AnalyzePT(context.Background(), buf, o)
		if err != nil || len(p.Streams) != 1 {
			t.Fatalf("%v, %d streams", err, len(p.Streams))
		}
		return p.Streams[0].Stats
	}
	def := analyze(PTOptions{})
	recorded := analyze(PTOptions{Config: intelpt.ConfigOf})
	none := analyze(PTOptions{Config: func(string) (intelpt.Config, bool) { return intelpt.Config{}, false }})
	if !reflect.DeepEqual(def, recorded) {
		t.Errorf("default %+v\ncapture.json's %+v", def, recorded)
	}
	if reflect.DeepEqual(recorded, none) {
		t.Errorf("the timing parameters change nothing: %+v", none)
	}
}

// TestAnalyzePTCutTrace: a trace that ends inside a packet is loss in
// the report, named with the packet's offset as pt stats, pt flow and pt
// calls name it. The oracle is libipt's ptdump: its listing of
// call_direct-ret_compressed has a FUP at 0x1c and a packet at 0x1f, so
// the first 0x1d bytes end 1 byte into the FUP. Before, the report said
// "truncated tail" without where.
func TestAnalyzePTCutTrace(t *testing.T) {
	full, err := os.ReadFile("../intelpt/testdata/libipt/call_direct-ret_compressed.pt")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cut.pt")
	if err := os.WriteFile(path, full[:0x1d], 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := AnalyzePT(context.Background(), path, PTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "pt stats: data lost: [" + path + ": trace ends inside a packet at offset 0x1c (last 1 bytes)]"; p.Loss != want {
		t.Errorf("loss %q, want %q", p.Loss, want)
	}
}
