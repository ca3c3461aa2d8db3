package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/usb"
)

// TestWriteUSBStats: the usb_endpoint records of the lab capture count, per
// endpoint, the submissions and completions tshark finds (usb.urb_type 'S'
// and 'C' per usb.endpoint_address); the text form has a row per endpoint.
func TestWriteUSBStats(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark (the oracle) not installed")
	}
	path := filepath.Join("..", "testdata", "usbmon", "lab-capture.pcapng")
	out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-e", "usb.bus_id", "-e", "usb.device_address", "-e", "usb.endpoint_address", "-e", "usb.urb_type").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(l, "\t")
		var ep uint64
		fmt.Sscanf(f[2], "0x%x", &ep)
		want[fmt.Sprintf("%s:%s/%d %s", f[0], f[1], ep, f[3])]++
	}

	write := func(asJSON bool) string {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		pl, err := usb.OpenPipeline(f, path, -1, false, usb.ReadOptions{Selection: usb.AnySelection()})
		if err != nil {
			t.Fatal(err)
		}
		defer pl.Close()
		st, err := pl.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteUSBStats(&b, st, pl, path, asJSON); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	got := map[string]uint64{}
	sc := bufio.NewScanner(strings.NewReader(write(true)))
	first := true
	for sc.Scan() {
		var r usb.StatsRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if first && (r.Kind != "input" || !strings.Contains(sc.Text(), `"usbmon pcapng"`)) {
			t.Errorf("first record %s, want the input record", sc.Text())
		}
		first = false
		if r.Kind == usb.KindEndpoint {
			k := fmt.Sprintf("%d:%d/%d", r.Bus, r.Dev, *r.EP)
			for typ, n := range map[string]uint64{"'S'": r.Submissions, "'C'": r.Completions} {
				if n > 0 {
					got[k+" "+typ] = n
				}
			}
		}
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d, tshark counts %d", k, got[k], n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d endpoint counts, tshark has %d: %v vs %v", len(got), len(want), got, want)
	}
	text := write(false)
	if rows := strings.Count(text, "\n"); rows < len(want)/2 || !strings.HasPrefix(text, "DEVICE") {
		t.Errorf("text table of %d lines for %d endpoints:\n%s", rows, len(want)/2, text)
	}
}
