package calls

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/internal/ptgen"
)

// Job.Open maps a raw trace file (Run drops its pages behind the
// decoder): pt calls' output from it equals the output of the same trace
// read into memory (RawInput), in every form, on a trace of several MiB.
func TestJobOpenMappedRaw(t *testing.T) {
	p, err := ptgen.Generate(ptgen.Config{Seed: 4, Insns: 2_000_000, Timing: true})
	if err != nil {
		t.Fatal(err)
	}
	var trace []byte
	for len(trace) < 3<<20 {
		trace = append(trace, p.Trace...)
	}
	dir := t.TempDir()
	ptFile, code := filepath.Join(dir, "t.pt"), filepath.Join(dir, "code.bin")
	if err := os.WriteFile(ptFile, trace, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(code, p.Code, 0o600); err != nil {
		t.Fatal(err)
	}
	j := Job{Raw: []string{code + ":" + "0x" + strconv.FormatUint(p.Base, 16)}, MaxDepth: DefaultTreeDepth}
	for _, out := range []Output{OutputTree, OutputJSON} {
		in, o, err := j.Open(ptFile)
		if err != nil {
			t.Fatal(err)
		}
		if in.mapped == nil || !in.mapped.Mapped() {
			t.Fatal("a raw trace file is not mapped")
		}
		var got, want bytes.Buffer
		if _, err := Run(&got, in, ptFile, out, o); err != nil {
			t.Fatal(err)
		}
		in.Close()
		mem := RawInput(trace, intelpt.Config{})
		if _, err := Run(&want, mem, ptFile, out, o); err != nil {
			t.Fatal(err)
		}
		if want.Len() == 0 || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("output %d: mapped %d bytes, in memory %d bytes: differ", out, got.Len(), want.Len())
		}
	}
}
