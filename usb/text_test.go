package usb_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

// TestAppendAddressKernel compares AppendAddress and the first fields of
// AppendEventText with what the kernel itself wrote in usbmon text
// captures ('1u' with a bus number, '1t' without): the address word, the
// event type, the status of completions and the seconds since the first
// event (from the kernel's microsecond stamps).
func TestAppendAddressKernel(t *testing.T) {
	for _, path := range []string{"../testdata/usbmon/lab-0u.txt", "../testdata/usbmon/lab-hidbus-t.txt"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		r, _, err := usbmon.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		pl := usb.NewPipeline(r, nil, nil)
		dec := usb.NewDecoder(pl.Identities)
		var firstStamp int64 = -1
		n := 0
		err = pl.Each(context.Background(), func(seq uint64, ev *usbmon.Event, p usb.Pair, paired bool) error {
			kernel := strings.Fields(lines[seq-1])
			if a := strings.Split(kernel[3], ":"); len(a) == 3 && len(a[2]) == 2 && a[2][0] == '0' {
				// '1t' writes the endpoint as %02u; iotap's lines
				// (pinned by the CLI goldens) have no leading zero.
				kernel[3] = a[0] + ":" + a[1] + ":" + a[2][1:]
			}
			if got := string(usb.AppendAddress(nil, ev)); got != kernel[3] {
				return fmt.Errorf("event %d: address %q, the kernel wrote %q", seq, got, kernel[3])
			}
			stamp, _ := strconv.ParseInt(kernel[1], 10, 64)
			if firstStamp < 0 {
				firstStamp = stamp
			}
			rel := float64(usb.Elapsed(pl.First, usb.Micros(ev), ev)) / 1e6
			mine := strings.Fields(string(usb.AppendEventText(nil, seq, rel, ev, p, paired, dec.Decode(ev, p, paired))))
			want := []string{strconv.FormatUint(seq, 10), strconv.FormatFloat(float64(stamp-firstStamp)/1e6, 'f', 6, 64), kernel[2], kernel[3]}
			if strings.Join(mine[:4], " ") != strings.Join(want, " ") {
				return fmt.Errorf("event %d: line starts %q, want %q (kernel line %q)", seq, mine[:4], want, lines[seq-1])
			}
			if kernel[2] == "C" {
				st, _ := strconv.ParseInt(strings.Split(kernel[4], ":")[0], 10, 32) // iso: status:interval
				if !strings.HasPrefix(mine[4], usb.StatusName(int32(st))) {
					return fmt.Errorf("event %d: status %q, the kernel wrote %s", seq, mine[4], kernel[4])
				}
			}
			n++
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if n != len(lines) || n < 10 {
			t.Fatalf("%s: %d events checked of %d lines", path, n, len(lines))
		}
	}
}

// TestAppendPairTextTshark checks the transfers of AppendPairText against
// tshark's pairing of the same capture: the submission a completion
// answers (usb.request_in) and the latency (usb.time).
func TestAppendPairTextTshark(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed")
	}
	const path = "../testdata/usbmon/lab-capture.pcapng"
	out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-e", "frame.number", "-e", "usb.request_in", "-e", "usb.time").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // "req->frame" -> latency
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		c := strings.Split(l, "\t")
		if c[1] != "" {
			sec, _ := strconv.ParseFloat(c[2], 64)
			want[c[1]+"->"+c[0]] = time.Duration(sec * 1e9).Round(time.Microsecond).String()
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, _, err := usbmon.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	pl := usb.NewPipeline(r, nil, nil)
	got := 0
	err = pl.Each(context.Background(), func(seq uint64, ev *usbmon.Event, p usb.Pair, paired bool) error {
		if !paired {
			return nil
		}
		line := string(usb.AppendPairText(nil, p, ev, pl.Identities))
		fields := strings.Fields(line)
		lat, ok := want[fields[0]]
		if !ok {
			return fmt.Errorf("%q: tshark does not pair %s", line, fields[0])
		}
		if fields[2] != string(usb.AppendAddress(nil, ev)) || !strings.Contains(line, " lat="+lat) {
			return fmt.Errorf("%q: want the address %s and lat=%s (tshark)", line, usb.AppendAddress(nil, ev), lat)
		}
		got++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != len(want) || got == 0 {
		t.Fatalf("%d transfers paired, tshark pairs %d", got, len(want))
	}
}

// TestAppendHexDumpXXD compares the dump with xxd's: the same bytes (hex
// columns read back) and the same ASCII column, row by row.
func TestAppendHexDumpXXD(t *testing.T) {
	xxd, err := exec.LookPath("xxd")
	if err != nil {
		t.Skip("xxd not installed")
	}
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 100, 4096 + 3} {
		data := make([]byte, n)
		rng.Read(data)
		for i := range data[:n/2] {
			data[i] = byte(0x20 + i%95) // printable too
		}
		cmd := exec.Command(xxd, "-c", "16")
		cmd.Stdin = bytes.NewReader(data)
		ref, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		var refRows []string
		sc := bufio.NewScanner(bytes.NewReader(ref))
		for sc.Scan() {
			l := sc.Text()
			k := min(16, n-16*len(refRows))
			refRows = append(refRows, l[len(l)-k:]) // the ASCII column
		}
		rows := strings.Split(strings.TrimSuffix(string(usb.AppendHexDump(nil, data)), "\n"), "\n")
		if n == 0 {
			rows = nil
		}
		if len(rows) != len(refRows) {
			t.Fatalf("%d bytes: %d rows, xxd %d", n, len(rows), len(refRows))
		}
		var back []byte
		for i, row := range rows {
			if off := fmt.Sprintf("    %04x  ", i*16); !strings.HasPrefix(row, off) {
				t.Fatalf("row %d %q does not start with %q", i, row, off)
			}
			hexPart, ascii := row[10:10+16*3+1], row[10+16*3+2:]
			b, err := hex.DecodeString(strings.ReplaceAll(hexPart, " ", ""))
			if err != nil {
				t.Fatalf("row %d %q: %v", i, row, err)
			}
			back = append(back, b...)
			if ascii != refRows[i] {
				t.Errorf("%d bytes, row %d: ASCII %q, xxd %q", n, i, ascii, refRows[i])
			}
		}
		if !bytes.Equal(back, data) {
			t.Errorf("%d bytes: the hex columns hold other bytes", n)
		}
	}
}

// TestSelection checks the flags' selection: what each field keeps, and
// errors that name the flag.
func TestSelection(t *testing.T) {
	ids := usb.NewIdentities()
	ids.Set(usb.DeviceInfo{Bus: 1, Device: 2, HasID: true, Vendor: 0x0627, Product: 0x0001})
	kbd := usbmon.Event{Transfer: usbmon.Interrupt, In: true, Bus: 1, Device: 2, Endpoint: 1, Type: usbmon.Callback, Status: -32}
	disk := usbmon.Event{Transfer: usbmon.Bulk, In: false, Bus: 2, Device: 3, Endpoint: 2, Type: usbmon.Callback, Fields: usbmon.HasBus}
	for _, tc := range []struct {
		mod       func(*usb.Selection)
		kbd, disk bool
		err       string
	}{
		{func(s *usb.Selection) {}, true, true, ""},
		{func(s *usb.Selection) { s.Bus = 2 }, false, true, ""},
		{func(s *usb.Selection) { s.Device = 2 }, true, false, ""},
		{func(s *usb.Selection) { s.Endpoint = 2 }, false, true, ""},
		{func(s *usb.Selection) { s.Type = "intr" }, true, false, ""},
		{func(s *usb.Selection) { s.Dir = "OUT" }, false, true, ""},
		{func(s *usb.Selection) { s.Status = "stall" }, true, false, ""},
		{func(s *usb.Selection) { s.VIDPID = "0627:0001" }, true, false, ""},
		{func(s *usb.Selection) { s.Expr = "usb.bus_id == 2 || usb.device_address == 9" }, false, true, ""},
		{func(s *usb.Selection) { s.Expr = "usb.bus_id ==" }, false, false, "-Y: "},
		{func(s *usb.Selection) { s.Device = 128 }, false, false, "--dev 128 out of range 0..127"},
		{func(s *usb.Selection) { s.Endpoint = 16 }, false, false, "--ep 16 out of range 0..15"},
		{func(s *usb.Selection) { s.Dir = "up" }, false, false, `--dir "up": want in or out`},
		{func(s *usb.Selection) { s.Status = "EWHAT" }, false, false, `--status "EWHAT"`},
		{func(s *usb.Selection) { s.Type = "x" }, false, false, "--type: "},
		{func(s *usb.Selection) { s.From = "mark:go" }, false, false, "no markers"},
	} {
		s := usb.AnySelection()
		tc.mod(&s)
		f, _, err := s.Filter(ids)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: error %v, want %q", s, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		if f.Match(&kbd) != tc.kbd || f.Match(&disk) != tc.disk {
			t.Errorf("%+v: keyboard %v disk %v, want %v %v", s, f.Match(&kbd), f.Match(&disk), tc.kbd, tc.disk)
		}
	}
	if s := (usb.Selection{From: "2026-01-02T03:04:05Z"}); !s.WallClock() {
		t.Error("an RFC 3339 --from is not a wall-clock time")
	}
	if s := (usb.Selection{From: "1.5", To: "+2s"}); s.WallClock() {
		t.Error("relative times taken for wall-clock times")
	}
}

// TestPipelineLoss checks what a run lost: skipped text lines and a
// truncated input are listed, another read error is returned.
func TestPipelineLoss(t *testing.T) {
	text := "d5ea89a0 3575914555 S Ci:1:001:0 s a3 00 0000 0003 0004 4 <\nnot a usbmon line\n" +
		"d5ea89a0 3575914560 C Ci:1:001:0 0 4 = 01050000\n"
	r, _, err := usbmon.NewReaderOptions(strings.NewReader(text), usbmon.ReaderOptions{KeepGoing: true})
	if err != nil {
		t.Fatal(err)
	}
	pl := usb.NewPipeline(r, nil, nil)
	readErr := pl.Each(context.Background(), func(uint64, *usbmon.Event, usb.Pair, bool) error { return nil })
	lost, err := pl.Loss(readErr)
	if err != nil || len(lost) != 1 || lost[0] != "1 unreadable lines skipped" {
		t.Fatalf("Loss = %q, %v; want the skipped line", lost, err)
	}
	other := fmt.Errorf("disk on fire")
	if _, err := pl.Loss(other); err != other {
		t.Fatalf("Loss(other) = %v", err)
	}
	lost, err = pl.Loss(fmt.Errorf("at byte 9: %w", usbmon.ErrTruncated))
	if err != nil || len(lost) != 2 {
		t.Fatalf("Loss(truncated) = %q, %v", lost, err)
	}
}

func ExampleAppendEventText() {
	text := `d5ea89a0 3575914555 S Ci:1:001:0 s a3 00 0000 0003 0004 4 <
d5ea89a0 3575914560 C Ci:1:001:0 0 4 = 01050000
`
	r, _, err := usbmon.NewReader(strings.NewReader(text))
	if err != nil {
		panic(err)
	}
	pl := usb.NewPipeline(r, nil, nil)
	dec := usb.NewDecoder(pl.Identities)
	var out []byte
	err = pl.Each(context.Background(), func(seq uint64, ev *usbmon.Event, p usb.Pair, paired bool) error {
		rel := float64(usb.Elapsed(pl.First, usb.Micros(ev), ev)) / 1e6
		out = usb.AppendEventText(out, seq, rel, ev, p, paired, dec.Decode(ev, p, paired))
		if paired {
			out = usb.AppendPairText(out, p, ev, pl.Identities)
		}
		return nil
	})
	fmt.Print(string(out), err)
	// Output:
	// 1 0.000000 S Ci:1:001:0 GET_STATUS port=3 len=4
	// 2 0.000005 C Ci:1:001:0 OK len=4 lat=5µs status=connection|power|high-speed change=0
	// 1->2 urb=0xd5ea89a0 Ci:1:001:0 OK len=4/4 lat=5µs GET_STATUS port=3 len=4
	// <nil>
}

func ExampleSelection() {
	sel := usb.AnySelection()
	sel.Type, sel.Dir = "bulk", "in"
	f, _, err := sel.Filter(usb.NewIdentities())
	if err != nil {
		panic(err)
	}
	in := usbmon.Event{Transfer: usbmon.Bulk, In: true}
	out := usbmon.Event{Transfer: usbmon.Bulk}
	fmt.Println(f.Match(&in), f.Match(&out))
	// Output:
	// true false
}
