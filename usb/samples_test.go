package usb

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

// labSamples are the kernel's own captures recorded in the lab (see
// ../testdata/usbmon/README.md).
const labSamples = "../testdata/usbmon"

func labSample(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(labSamples, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s absent: %v", p, err)
	}
	return p
}

// labDevices parses lab-devices.txt: "bus:dev vid:pid speed N product (path)".
func labDevices(t *testing.T) map[[2]int][3]string {
	t.Helper()
	f, err := os.Open(labSample(t, "lab-devices.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[[2]int][3]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 5 {
			continue
		}
		bd := strings.SplitN(fs[0], ":", 2)
		bus, _ := strconv.Atoi(bd[0])
		dev, _ := strconv.Atoi(bd[1])
		line := sc.Text()
		prod := line[strings.Index(line, fs[4]):strings.LastIndex(line, " (")]
		out[[2]int{bus, dev}] = [3]string{fs[1], prod}
	}
	return out
}

// TestLabSampleText decodes the kernel's 0u text of the lab recording: the
// replugged keyboard is identified from its enumeration (as sysfs lists
// it), descriptors cut at 32 bytes are reported, not failed, and the
// storage commands decode.
func TestLabSampleText(t *testing.T) {
	evs := readAll(t, labSample(t, "lab-0u.txt"))
	devs := labDevices(t)
	ids := NewIdentities()
	dec := NewDecoder(ids)
	st := NewStats()
	var cbw, csw, partial int
	for _, e := range evs {
		p, ok := st.Add(e)
		if ok {
			ids.Observe(p, e)
		}
		d := dec.Decode(e, p, ok)
		switch {
		case strings.HasPrefix(d.Summary, "CBW "):
			cbw++
		case strings.HasPrefix(d.Summary, "CSW ") && strings.Contains(d.Summary, " passed "):
			csw++
		}
		if d.Err != nil {
			partial++
		}
	}
	if cbw == 0 || cbw != csw {
		t.Errorf("%d CBWs, %d passed CSWs", cbw, csw)
	}
	identified := 0
	for k, want := range devs {
		info, ok := ids.Lookup(uint16(k[0]), uint8(k[1]))
		if !ok || !info.HasID {
			continue // enumerated before the recording
		}
		identified++
		if got := strings.ToLower(strings.TrimSpace(formatID(info))); got != want[0] {
			t.Errorf("%v: VID:PID %s from the capture, %s in sysfs", k, got, want[0])
		}
		// usbmon text keeps 32 data bytes: 15 UTF-16 characters.
		if info.ProductName == "" || !strings.HasPrefix(want[1], info.ProductName) {
			t.Errorf("%v: product %q from the capture, %q in sysfs", k, info.ProductName, want[1])
		}
	}
	if identified == 0 {
		t.Error("no device identified from the text capture")
	}
	t.Logf("%d events, %d CBWs, %d devices identified, %d partial decodes (32-byte text limit), pairs %+v",
		len(evs), cbw, identified, partial, st.Pairer.Counts())
}

func formatID(d *DeviceInfo) string {
	const hexd = "0123456789abcdef"
	b := []byte{}
	for _, v := range []uint16{d.Vendor, d.Product} {
		if len(b) > 0 {
			b = append(b, ':')
		}
		b = append(b, hexd[v>>12], hexd[v>>8&15], hexd[v>>4&15], hexd[v&15])
	}
	return string(b)
}

// TestLabSampleOracle compares our decoding with tshark on the lab
// recordings: the pcapng iotap captured, and the kernel's 0u text written
// as pcapng by package usbmon (tshark cannot read text).
func TestLabSampleOracle(t *testing.T) {
	t.Run("lab-capture.pcapng", func(t *testing.T) {
		p := labSample(t, "lab-capture.pcapng")
		evs := readAll(t, p)
		rows := tsharkRows(t, p)
		if len(rows) != len(evs) {
			t.Fatalf("tshark %d frames, we %d", len(rows), len(evs))
		}
		t.Logf("%d field comparisons", oracleCompare(t, evs, rows))
	})
	t.Run("lab-0u.txt", func(t *testing.T) {
		evs := readAll(t, labSample(t, "lab-0u.txt"))
		needTshark(t)
		p := filepath.Join(t.TempDir(), "0u.pcapng")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w, err := usbmon.NewPcapngWriter(f, usbmon.LinkTypeUSBLinuxMmapped)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if err := w.Write(e); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		rows := tsharkRows(t, p)
		if len(rows) != len(evs) {
			t.Fatalf("tshark %d frames, we %d", len(rows), len(evs))
		}
		t.Logf("%d field comparisons", oracleCompare(t, evs, rows))
	})
}
