package intelpt

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestParseInput: a raw trace is one stream (CPU -1) aliasing the input;
// a perf.data one stream per CPU with the file's configuration and loss;
// a perf.data without AUXTRACE records ErrNoPTData, returned with what
// it holds; bytes without a PSB ErrNoPSB.
func TestParseInput(t *testing.T) {
	var e Encoder
	e.Encode(Packet{Kind: KindPSB})
	e.Encode(Packet{Kind: KindPSBEnd})
	raw := e.Bytes()
	in, err := ParseInput(raw)
	if err != nil || in.Perf != nil || len(in.Streams) != 1 || in.Streams[0].CPU != -1 || in.Streams[0].Name != "" ||
		&in.Streams[0].Data[0] != &raw[0] || in.Config() != (Config{}) {
		t.Fatalf("raw: %+v, %v", in, err)
	}

	var w perfWriter
	w.auxtraceInfo(make([]uint64, 17))
	w.auxtrace(2, 7, 0, raw)
	w.auxtrace(0, 5, 1, raw)
	w.aux(AuxFlagTruncated)
	in, err = ParseInput(w.file(8, 0))
	if err != nil || in.Perf == nil || len(in.Streams) != 2 || in.Streams[0].Name != "cpu 0" || in.Streams[1].CPU != 2 ||
		in.Perf.AuxTruncated != 1 || in.Perf.LossSummary() == "" {
		t.Fatalf("perf.data: %+v, %v", in, err)
	}

	var empty perfWriter
	empty.auxtraceInfo(make([]uint64, 17))
	in, err = ParseInput(empty.file(8, 0))
	if !errors.Is(err, ErrNoPTData) || in == nil || in.Perf == nil {
		t.Fatalf("perf.data without PT: %+v, %v", in, err)
	}

	if _, err := ParseInput(raw[:15]); !errors.Is(err, ErrNoPSB) || err.Error() != "not an Intel PT trace: no PSB packet in its 15 bytes (decoding starts at a PSB)" {
		t.Fatalf("no PSB: %v", err)
	}
}

// TestReadFileRange: FILE:FROM[-TO] as libipt's ptdump takes it, only
// when no file has that name; ranges outside the file are a *RangeError.
func TestReadFileRange(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.pt")
	data := []byte("0123456789")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		arg  string
		want string
	}{
		{p, "0123456789"},
		{p + ":2", "23456789"},
		{p + ":0x2-0x5", "234"},
		{p + ":010-9", "8"}, // octal, as C's strtoull
	} {
		b, err := ReadFile(tc.arg)
		if err != nil || string(b) != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.arg, b, err, tc.want)
		}
	}
	var re *RangeError
	if _, err := ReadFile(p + ":10"); !errors.As(err, &re) || re.Size != 10 || re.From != 10 {
		t.Errorf(":10: %v", err)
	}
	if _, err := ReadFile(p + ":2-11"); !errors.As(err, &re) || err.Error() != "range 0x2-0xb outside "+p+" (10 bytes)" {
		t.Errorf(":2-11: %v", err)
	}
	for _, arg := range []string{p + ":5-2", p + ":x", p + ":1-", filepath.Join(dir, "none.pt:1")} {
		if _, err := ReadFile(arg); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want not found", arg, err)
		}
	}
	// A file whose name has a colon is read whole.
	q := filepath.Join(dir, "u.pt:3")
	os.WriteFile(q, data[:4], 0o600)
	if b, err := ReadFile(q); err != nil || string(b) != "0123" {
		t.Errorf("%s: %q, %v", q, b, err)
	}
}
