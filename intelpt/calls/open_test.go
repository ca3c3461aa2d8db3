package calls

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/iotap/iotap/intelpt"
)

// TestOpen: a perf.data is read as one (Format, no own binaries); a
// directory must be a capture directory; Input.Finder searches the
// input's own binaries first and perf's ~/.debug only when no build-id
// directory is given.
func TestOpen(t *testing.T) {
	in, err := Open("../testdata/libipt/two-cpus.perf.data")
	if err != nil || in.Format != intelpt.FormatPerfData || len(in.Streams) != 2 || in.BuildIDDirs != nil {
		t.Fatalf("perf.data: %+v, %v", in, err)
	}
	if _, err := Open(t.TempDir()); err == nil {
		t.Errorf("a directory without capture.json opened")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	in.BuildIDDirs = []string{"cap/binaries"}
	if f := in.Finder("/sysroot", nil); f.Sysroot != "/sysroot" || !slices.Equal(f.BuildIDDirs, []string{"cap/binaries", filepath.Join(home, ".debug")}) {
		t.Errorf("default dirs: %+v", f)
	}
	if f := in.Finder("", []string{"a", "b"}); !slices.Equal(f.BuildIDDirs, []string{"cap/binaries", "a", "b"}) {
		t.Errorf("given dirs: %+v", f)
	}
	if !slices.Equal(in.BuildIDDirs, []string{"cap/binaries"}) {
		t.Errorf("Finder changed the input's dirs: %v", in.BuildIDDirs)
	}
}

// TestNotes: the lines come in the order pt calls prints them, the
// sideband's unknown record types sorted, and FirstGaps holds at most
// MaxGapNotes of the gaps Analyze counts.
func TestNotes(t *testing.T) {
	in := &Input{Sideband: &intelpt.Sideband{Unknown: map[uint32]int{90: 2, 7: 1}, Bad: []error{errors.New("offset 0x10: short record")}}}
	r := &Result{Overlaps: []string{"pid 1: b over a"}, FirstGaps: []Gap{{Thread: 3, Insn: 5, Reason: "overflow"}}}
	want := []string{
		"gap: thread 3 at instruction 5: overflow",
		"overlapping mapping: pid 1: b over a (the later one is used)",
		"sideband: 1 record(s) of unknown type 7 skipped",
		"sideband: 2 record(s) of unknown type 90 skipped",
		"sideband: offset 0x10: short record",
	}
	if got := r.Notes(in); !slices.Equal(got, want) {
		t.Errorf("notes:\n%q\nwant\n%q", got, want)
	}

	// A trace of many PSB+ segments over code mapped nowhere: a gap each.
	var e intelpt.Encoder
	for i := 0; i < 40; i++ {
		e.Encode(intelpt.Packet{Kind: intelpt.KindPSB})
		e.Encode(intelpt.Packet{Kind: intelpt.KindFUP, IPC: intelpt.IPCSext48, Payload: 0x1000})
		e.Encode(intelpt.Packet{Kind: intelpt.KindPSBEnd})
		e.Encode(intelpt.Packet{Kind: intelpt.KindTNT8, Bits: 1, Payload: 1})
	}
	res, err := Analyze(RawInput(e.Bytes(), intelpt.Config{}), Options{Image: intelpt.NewImage()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Gaps <= MaxGapNotes || len(res.FirstGaps) != MaxGapNotes {
		t.Errorf("%d gaps, %d kept", res.Gaps, len(res.FirstGaps))
	}
}

// TestBuildIDDirs: the one list of build-id directories: the input's own
// first, then the given ones, or ~/.debug when none is given (pt flow and
// timeline --pt-calls use it as Input.Finder does).
func TestBuildIDDirs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	own := []string{"cap/binaries"}
	for _, tc := range []struct {
		own, dirs, want []string
	}{
		{nil, nil, []string{filepath.Join(home, ".debug")}},
		{own, nil, []string{"cap/binaries", filepath.Join(home, ".debug")}},
		{own, []string{"a"}, []string{"cap/binaries", "a"}},
		{nil, []string{"a", "b"}, []string{"a", "b"}},
	} {
		if got := BuildIDDirs(tc.own, tc.dirs); !slices.Equal(got, tc.want) {
			t.Errorf("BuildIDDirs(%q, %q) = %q, want %q", tc.own, tc.dirs, got, tc.want)
		}
	}
	if got := BuildIDDirs(own[:1:1], nil); !slices.Equal(own, []string{"cap/binaries"}) || len(got) != 2 {
		t.Errorf("own changed: %q", own)
	}
}
