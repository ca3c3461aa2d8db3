package doctor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/golden"
)

// TestDoctorNDJSONGolden pins 'iotap doctor --json' byte for byte
// (IOTAP_UPDATE_GOLDEN=1 rewrites the file): an available facility (remedy
// null), a missing one whose detail needs escaping, a fake root (the
// input's file) and an unknown kernel release (null).
func TestDoctorNDJSONGolden(t *testing.T) {
	r := Report{Kernel: "6.1.0-iotap", Facilities: []Facility{
		{Name: NameTracefs, Available: true, Detail: "mounted at /sys/kernel/tracing"},
		{Name: NameUsbmon, Detail: "CONFIG_USB_MON is not set in \"/boot/config-6.1.0\"\t(m)", Remedy: "rebuild the kernel with CONFIG_USB_MON=y"},
	}}
	b := r.AppendNDJSON(nil, "/srv/root")
	b = Report{}.AppendNDJSON(b, "")
	golden.Check(t, "doctor.ndjson", b)
}

// ndjsonRecord is any record of the stream, as encoding/json reads it.
type ndjsonRecord struct {
	Kind       string  `json:"kind"`
	Schema     int     `json:"schema"`
	Source     string  `json:"source"`
	File       *string `json:"file"`
	Name       string  `json:"name"`
	Available  bool    `json:"available"`
	Missing    int     `json:"missing"`
	Detail     string  `json:"detail"`
	Remedy     *string `json:"remedy"`
	Kernel     *string `json:"kernel"`
	Facilities int     `json:"facilities"`
}

// FuzzDoctorNDJSON: every line AppendNDJSON writes is one JSON object that
// encoding/json parses, and the values read back as the report's (strings
// as encoding/json carries them: invalid UTF-8 becomes U+FFFD).
func FuzzDoctorNDJSON(f *testing.F) {
	f.Add("6.1.0", "/", "tracefs", true, "mounted", "", "usbmon", false, "\"not\" set\x01", "modprobe usbmon")
	f.Add("", "", "\xff", false, "", "", "", true, "\n", "\\")
	f.Fuzz(func(t *testing.T, kernel, root, n1 string, a1 bool, d1, r1, n2 string, a2 bool, d2, r2 string) {
		rep := Report{Kernel: kernel, Facilities: []Facility{{n1, a1, d1, r1}, {n2, a2, d2, r2}}}
		b := rep.AppendNDJSON(nil, root)
		text := func(s string) string {
			j, _ := json.Marshal(s)
			var w string
			json.Unmarshal(j, &w)
			return w
		}
		orNull := func(p *string, s string) bool {
			if s == "" {
				return p == nil
			}
			return p != nil && *p == text(s)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		var recs []ndjsonRecord
		for sc.Scan() {
			var r ndjsonRecord
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("%q: %v", sc.Text(), err)
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%q: %v", sc.Text(), err)
			}
			if !strings.HasPrefix(sc.Text(), `{"kind":"`) {
				t.Fatalf("kind is not first: %s", sc.Text())
			}
			recs = append(recs, r)
		}
		if len(recs) != 4 || bytes.Count(b, []byte("\n")) != 4 {
			t.Fatalf("%d records, %d lines:\n%s", len(recs), bytes.Count(b, []byte("\n")), b)
		}
		if in := recs[0]; in.Kind != "input" || in.Schema != 1 || in.Source != "doctor" || !orNull(in.File, root) {
			t.Fatalf("input record %+v, root %q", in, root)
		}
		missing := 0
		for i, fa := range rep.Facilities {
			r := recs[1+i]
			if r.Kind != NDJSONFacility || r.Available != fa.Available || r.Name != text(fa.Name) || r.Detail != text(fa.Detail) || !orNull(r.Remedy, fa.Remedy) {
				t.Fatalf("record %+v, want %+v", r, fa)
			}
			if !fa.Available {
				missing++
			}
		}
		s := recs[3]
		if s.Kind != NDJSONSummary || !orNull(s.Kernel, kernel) || s.Facilities != 2 || s.Missing != missing {
			t.Fatalf("summary %+v, want kernel %q, 2 facilities, %d missing", s, kernel, missing)
		}
	})
}
