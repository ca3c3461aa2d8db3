package userevents

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzParseCommand: never panics; what parses prints back to a command
// that parses to the same schema, and a payload built for it validates.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"a u32 x", "ev u8 a; s16 b; char[4] c; __rel_loc char[] d; struct p e 3",
		"x unsigned int a;__data_loc char[] s", "e long a", "e:F u32 a", "e struct s a 0", "e char[0x10] a", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		s, err := ParseCommand(cmd)
		if err != nil {
			return
		}
		s2, err := ParseCommand(s.Command())
		if err != nil {
			t.Fatalf("%q printed as %q which fails: %v", cmd, s.Command(), err)
		}
		if !reflect.DeepEqual(s, s2) {
			t.Fatalf("round trip %q: %+v != %+v", cmd, s, s2)
		}
		args := make([]any, len(s.Fields))
		for i, fl := range s.Fields {
			switch fl.Kind {
			case KindInt, KindUint:
				args[i] = 1
			case KindStruct:
				args[i] = make([]byte, fl.Size)
			default:
				args[i] = ""
			}
		}
		p, err := s.AppendPayload(nil, args...)
		if err != nil {
			return // too big with dynamic data
		}
		if err := s.ValidatePayload(p); err != nil {
			t.Fatalf("own payload invalid: %v", err)
		}
	})
}

func addTestdata(f *testing.F, names ...string) {
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzParseFormat: never panics; decoding any record against a parsed
// format never panics either.
func FuzzParseFormat(f *testing.F) {
	addTestdata(f, "format_iotap_lab_pg.txt", "format_iotap_lab_en.txt", "header_page.txt")
	f.Fuzz(func(t *testing.T, data []byte) {
		ff, err := ParseFormat(data)
		if err != nil {
			return
		}
		rec := make([]byte, 64)
		for i := range rec {
			rec[i] = byte(i * 7)
		}
		ff.Decode(rec, nil)
		ff.Decode(rec[:3], nil)
	})
}

// FuzzDecodePage: never panics, records stay inside the page, and each
// decodes (or fails cleanly) against the golden format.
func FuzzDecodePage(f *testing.F) {
	addTestdata(f, "page_iotap_lab_pg_cpu0.bin", "page_iotap_lab_pg_cpu1.bin")
	ff, err := ParseFormat(mustRead(f, "format_iotap_lab_pg.txt"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		_, recs, _ := DecodePage(page, DefaultPageLayout, nil)
		for _, r := range recs {
			if len(r.Data) > len(page) {
				t.Fatal("record bigger than the page")
			}
			ff.Decode(r.Data, nil)
		}
	})
}

// FuzzParseStatus: never panics.
func FuzzParseStatus(f *testing.F) {
	addTestdata(f, "status_busy.txt", "status_idle.txt")
	f.Add([]byte("1:test # Used by ftrace perf\n\nActive: 1\nBusy: 1\nMax: 4096\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseStatus(data)
		if err == nil && st == nil {
			t.Fatal("nil status without error")
		}
	})
}

func mustRead(f *testing.F, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		f.Fatal(err)
	}
	return b
}
