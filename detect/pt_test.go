package detect

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// TestOpenPT: a raw PT file is streamed from its first byte (read back
// equal to the file); a perf.data, a byte range and a file not raw PT by
// its head are loaded; a directory, a trace of another kind and a file
// without PSB are errors that say what they are; a range outside the file
// is a *intelpt.RangeError.
func TestOpenPT(t *testing.T) {
	const lib = "../intelpt/testdata/libipt/"
	in, err := OpenPT(lib+"dump-all-packets.pt", true)
	if err != nil || in.Stream == nil || in.Loaded != nil {
		t.Fatalf("raw: %+v, %v", in, err)
	}
	got, _ := io.ReadAll(in.Stream)
	want, _ := os.ReadFile(lib + "dump-all-packets.pt")
	if !bytes.Equal(got, want) || in.Size() != int64(len(want)) || in.Perf() != nil {
		t.Errorf("streamed %d bytes, size %d; want %d", len(got), in.Size(), len(want))
	}
	in.Close()

	if in, err := OpenPT(lib+"dump-all-packets.pt", false); err != nil || in.Loaded == nil || len(in.Loaded.Streams) != 1 || in.Size() != -1 {
		t.Errorf("raw, not streamed: %+v, %v", in, err)
	}
	if in, err := OpenPT(lib+"two-cpus.perf.data", true); err != nil || in.Stream != nil || len(in.Loaded.Streams) != 2 || in.Perf() == nil {
		t.Errorf("perf.data: %+v, %v", in, err)
	}
	if in, err := OpenPT(lib+"dump-all-packets.pt:0x0-0x80", true); err != nil || in.Loaded == nil || len(in.Loaded.Streams[0].Data) != 0x80 {
		t.Errorf("range: %+v, %v", in, err)
	}
	var re *intelpt.RangeError
	if _, err := OpenPT(lib+"ovf.pt:0x100", true); !errors.As(err, &re) {
		t.Errorf("range outside: %v", err)
	}
	for path, want := range map[string]string{
		"../testdata/capture":                   "pt: ../testdata/capture is a directory (give a trace file)",
		"../testdata/usbmon/lab-capture.pcapng": "pt: ../testdata/usbmon/lab-capture.pcapng: not an Intel PT trace: it is usbmon pcapng",
		lib + "call_direct-ret_compressed.bin":  "pt: " + lib + "call_direct-ret_compressed.bin: not an Intel PT trace: binary data",
		lib + "nosuchfile.pt":                   "cannot read " + lib + "nosuchfile.pt: no such file",
	} {
		if _, err := OpenPT(path, true); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
}

// TestOpenPTPerfDataStdin: a perf.data on standard input is copied to a
// temporary file (its streams are found by offsets), streamed or not: the
// same streams, bytes and configuration as the file opened by name, whose
// streams are read from the file (not held).
func TestOpenPTPerfDataStdin(t *testing.T) {
	const p = "../intelpt/testdata/libipt/two-cpus.perf.data"
	byName, err := OpenPT(p, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range []bool{true, false} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		old := os.Stdin
		os.Stdin = f
		in, err := OpenPT("-", stream)
		os.Stdin = old
		f.Close()
		if err != nil || in.Stream != nil || in.Loaded == nil || in.Perf() == nil {
			t.Fatalf("stream %v: %+v, %v", stream, in, err)
		}
		if len(in.Loaded.Streams) != len(byName.Loaded.Streams) || len(in.Loaded.Streams) != 2 {
			t.Fatalf("stream %v: %d streams, by name %d", stream, len(in.Loaded.Streams), len(byName.Loaded.Streams))
		}
		for i, s := range in.Loaded.Streams {
			// by name, the streams are read from the file as they come
			fromFile, err := io.ReadAll(byName.Loaded.Streams[i].Reader())
			got, gerr := io.ReadAll(s.Reader())
			if err != nil || gerr != nil || byName.Loaded.Streams[i].Data != nil || len(got) == 0 || !bytes.Equal(got, fromFile) {
				t.Errorf("stream %v: stream %d differs from the file's", stream, i)
			}
		}
		if in.Perf().Config != byName.Perf().Config {
			t.Errorf("stream %v: config %+v, by name %+v", stream, in.Perf().Config, byName.Perf().Config)
		}
		in.Close()
	}
}

// TestPTInputConfig: the configuration an input recorded is a perf.data's
// AUXTRACE_INFO, else the capture.json beside a buffer of 'iotap pt
// capture' (streamed or loaded), else zero.
func TestPTInputConfig(t *testing.T) {
	const lib = "../intelpt/testdata/libipt/"
	perf, _ := os.ReadFile(lib + "two-cpus.perf.data")
	want, err := intelpt.ParseInput(perf)
	if err != nil {
		t.Fatal(err)
	}
	if in, err := OpenPT(lib+"two-cpus.perf.data", true); err != nil || in.Config() != want.Config() {
		t.Errorf("perf.data: %+v, want %+v (%v)", in.Config(), want.Config(), err)
	}
	if in, err := OpenPT(lib+"dump-all-packets.pt", true); err != nil || in.Config() != (intelpt.Config{}) {
		t.Errorf("raw file: %+v, %v", in.Config(), err)
	}
	dir := t.TempDir()
	raw, _ := os.ReadFile(lib + "dump-all-packets.pt")
	os.WriteFile(dir+"/cpu0.pt", raw, 0o600)
	os.WriteFile(dir+"/capture.json", []byte(`{"tool":"iotap","mtc_freq":3,"nom_freq":4,"cpuid_0x15_eax":1,"cpuid_0x15_ebx":2,"buffers":[{"file":"cpu0.pt"}]}`), 0o600)
	cap := intelpt.Config{MTCFreq: 3, NomFreq: 4, CPUID15EAX: 1, CPUID15EBX: 2}
	for _, stream := range []bool{true, false} {
		if in, err := OpenPT(dir+"/cpu0.pt", stream); err != nil || in.Config() != cap {
			t.Errorf("capture buffer (stream %v): %+v, want %+v (%v)", stream, in.Config(), cap, err)
		}
	}
}
