package regdb

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/iotap/iotap/mmiotrace"
)

// TestNameNDJSON: the mmio_name record AppendNameNDJSON writes by hand
// holds, key for key and value for value, what encoding/json makes of
// NewNameRecord, for every access of the lab log and of a log with
// accesses outside BARs, in BARs without a database, unnamed offsets and
// an UNKNOWN; every line is one JSON object.
func TestNameNDJSON(t *testing.T) {
	lab, err := os.ReadFile("../testdata/mmiotrace/e1000-probe.log")
	if err != nil {
		t.Fatal(err)
	}
	for i, log := range []string{namesLog + "UNKNOWN 1.5 1 0xfebc0008 0f,0b,90 0x0 0\n", string(lab)} {
		rd := mmiotrace.NewReader(strings.NewReader(log))
		bars := mmiotrace.NewBARMap()
		rules := []BARRule{{ByID: true, ID: PCIID{Vendor: 0x1234, Device: 0x5678}, Domain: "E1000", Text: "1234:5678/0=E1000"}}
		n := NewNamer(Binder{Rules: rules})
		var rec mmiotrace.Record
		var buf []byte
		kinds := map[string]int{}
		for {
			err := rd.ReadInto(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			bars.Observe(&rec)
			if !rec.Kind.IsAccess() {
				continue
			}
			a := n.Resolve(bars, &rec)
			buf = AppendNameNDJSON(buf[:0], rd.Line(), &rec, a)
			if bytes.IndexByte(buf, '\n') != len(buf)-1 {
				t.Fatalf("not one line: %q", buf)
			}
			var got, want map[string]any
			if err := json.Unmarshal(buf, &got); err != nil {
				t.Fatalf("%s: %v", buf, err)
			}
			j, err := json.Marshal(NewNameRecord(rd.Line(), &rec, a))
			if err != nil {
				t.Fatal(err)
			}
			json.Unmarshal(j, &want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("line %d:\ngot  %s\nwant %s", rd.Line(), buf, j)
			}
			switch {
			case got["register"] != nil:
				kinds["named"]++
			case got["domain"] != nil:
				kinds["unnamed"]++
			case got["bar"] != nil:
				kinds["no db"]++
			default:
				kinds["outside"]++
			}
			if got["access"] == "UNKNOWN" {
				kinds["unknown"]++
			}
		}
		if (i == 0 && len(kinds) != 5) || (i == 1 && kinds["named"] != 11946) {
			t.Errorf("log %d: cases %v", i, kinds)
		}
	}
}
