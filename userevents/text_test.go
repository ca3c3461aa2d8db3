package userevents

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// The trace file was written by the lab kernel for three events of
// "iotap_lab_txt u8 a; s32 b; u64 c; char[12] d; __rel_loc char[] s; s16 n".
func TestTextReaderGolden(t *testing.T) {
	f, err := ParseFormat(readTestdata(t, "format_iotap_lab_txt.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTextReader(bytes.NewReader(readTestdata(t, "trace_iotap_lab_txt.txt")), f)
	want := []string{
		"200 -5 1099511627776 tag hello world -1",
		"0 7 0   0",
		"1 2 3 a b=c x=1 y 4",
	}
	for i, w := range want {
		rec, err := tr.Next()
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, v := range rec.Values {
			parts = append(parts, fmt.Sprint(v.Any()))
		}
		if got := strings.Join(parts, " "); got != w || rec.PID != 72 || rec.CPU != 1 {
			t.Errorf("event %d: %q pid %d cpu %d, want %q", i, got, rec.PID, rec.CPU, w)
		}
	}
	if _, err := tr.Next(); err != io.EOF {
		t.Errorf("after the last event: %v", err)
	}
	rec0 := "           <...>-75      [001] .....     4.203449: iotap_lab_txt: a=(1) b=0x2 (2) c=0x3 (3) d=x s=y n=0x4 (4)\n"
	if rec, err := NewTextReader(strings.NewReader(rec0), f).Next(); err != nil || rec.TS != 4203449000 {
		t.Errorf("timestamp: %+v %v", rec, err)
	}
	for _, bad := range []string{
		"  x-1 [000] ..... 1.0: iotap_lab_txt: a=(1) b=zz (q) c=0x3 (3) d=x s=y n=0x4 (4)\n",
		"  x-1 [000] ..... 1.0: iotap_lab_txt: a=(1) c=0x3 (3)\n",
		"  x-y [000] ..... 1.0: iotap_lab_txt: a=(1)\n",
		"  x-1 000 ..... 1.0: iotap_lab_txt: a=(1)\n",
	} {
		_, err := NewTextReader(strings.NewReader(bad), f).Next()
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Line != 1 {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func FuzzTextReader(f *testing.F) {
	addTestdata(f, "trace_iotap_lab_txt.txt")
	ff, err := ParseFormat(mustRead(f, "format_iotap_lab_txt.txt"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := NewTextReader(bytes.NewReader(data), ff)
		for i := 0; i < 100; i++ {
			if _, err := tr.Next(); err != nil {
				return
			}
		}
	})
}
