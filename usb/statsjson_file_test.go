package usb

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

// TestAppendStatsNDJSONFile: with a file name every record carries it
// (iotap report --json) and is otherwise the record without it; devices
// are named by Identities.Names.
func TestAppendStatsNDJSONFile(t *testing.T) {
	st := NewStats()
	ids := NewIdentities()
	ids.Set(DeviceInfo{Bus: 1, Device: 4, HasID: true, Vendor: 0x0409, Product: 0x55aa, Manufacturer: "QEMU", ProductName: "Hub"})
	sub := usbmon.Event{ID: 1, Type: usbmon.Submission, Transfer: usbmon.Bulk, Bus: 1, Device: 4, Endpoint: 2, TextStamp: 10, Fields: usbmon.HasTextStamp}
	done := sub
	done.Type, done.Length, done.TextStamp = usbmon.Callback, 8, 30
	p := NewPairer()
	for _, ev := range []*usbmon.Event{&sub, &done} {
		pr, ok := p.Add(ev)
		st.Record(ev, pr, ok)
	}
	plain := strings.Split(strings.TrimSpace(string(AppendStatsNDJSON(nil, "", st, p.Counts(), ids))), "\n")
	named := strings.Split(strings.TrimSpace(string(AppendStatsNDJSON(nil, "a.pcap", st, p.Counts(), ids))), "\n")
	if len(plain) != 3 || len(named) != 3 {
		t.Fatalf("records:\n%v\n%v", plain, named)
	}
	for i := range plain {
		var a, b map[string]any
		if err := json.Unmarshal([]byte(plain[i]), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(named[i]), &b); err != nil {
			t.Fatal(err)
		}
		if _, ok := a["file"]; ok || b["file"] != "a.pcap" {
			t.Errorf("record %d: file %v / %v", i, a["file"], b["file"])
		}
		delete(b, "file")
		if ja, jb := mustJSON(a), mustJSON(b); ja != jb {
			t.Errorf("record %d differs besides file:\n%s\n%s", i, ja, jb)
		}
		if a["kind"] == KindDevice && (a["vidpid"] != "0409:55aa" || a["manufacturer"] != "QEMU" || a["product"] != "Hub") {
			t.Errorf("device record %v", a)
		}
		if a["kind"] == KindEndpoint && a["vidpid"] != "0409:55aa" {
			t.Errorf("endpoint record %v", a)
		}
	}
	if v, m, p := (*Identities)(nil).Names(1, 4); v+m+p != "" {
		t.Errorf("nil identities named a device")
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
