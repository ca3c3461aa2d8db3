package usbmon

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The Wireshark agreement test: tshark decodes a file and so do we; every
// packet must agree on every field both show.

var tsharkFields = []string{
	"usb.urb_id", "usb.urb_type", "usb.transfer_type", "usb.endpoint_address",
	"usb.device_address", "usb.bus_id", "usb.urb_status", "usb.urb_len", "usb.data_len",
	"usb.setup_flag", "usb.data_flag", "usb.bmRequestType", "usb.setup.bRequest",
	"usb.setup.wLength", "usb.urb_ts_sec", "usb.urb_ts_usec", "usb.interval",
	"usb.start_frame", "usb.copy_of_transfer_flags", "usb.iso.numdesc",
}

func tshark(t *testing.T, file string) [][]string {
	t.Helper()
	path, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed (apt-get install tshark)")
	}
	args := []string{"-r", file, "-T", "fields", "-E", "separator=|", "-E", "occurrence=f"}
	for _, f := range tsharkFields {
		args = append(args, "-e", f)
	}
	cmd := exec.Command(path, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("tshark %s: %v\n%s", file, err, errb.String())
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if l != "" {
			rows = append(rows, strings.Split(l, "|"))
		}
	}
	return rows
}

func flagString(b byte) string {
	if b == 0 {
		return `'\0'`
	}
	return "'" + string(rune(b)) + "'"
}

// ourFields renders ev as tshark prints it ("" where tshark prints nothing
// or where the field does not apply to this link type).
func ourFields(ev *Event, lt int) []string {
	f := make([]string, len(tsharkFields))
	f[0] = fmt.Sprintf("0x%016x", ev.ID)
	f[1] = "'" + string(rune(ev.Type)) + "'"
	f[2] = fmt.Sprintf("0x%02x", uint8(ev.Transfer))
	f[3] = fmt.Sprintf("0x%02x", ev.EndpointAddress())
	f[4] = strconv.Itoa(int(ev.Device))
	f[5] = strconv.Itoa(int(ev.Bus))
	f[6] = strconv.Itoa(int(ev.Status))
	f[7] = strconv.FormatUint(uint64(ev.Length), 10)
	f[8] = strconv.FormatUint(uint64(ev.CapLen), 10)
	f[9] = flagString(ev.SetupFlag)
	f[10] = flagString(ev.DataFlag)
	if ev.HasSetup() && ev.Transfer == Control {
		f[11] = fmt.Sprintf("0x%02x", ev.Setup[0])
		f[12] = strconv.Itoa(int(ev.Setup[1]))
		f[13] = strconv.Itoa(int(ev.Setup[6]) | int(ev.Setup[7])<<8)
	}
	f[14] = strconv.FormatInt(ev.Sec, 10)
	f[15] = strconv.Itoa(int(ev.Usec))
	if lt == LinkTypeUSBLinuxMmapped {
		f[16] = strconv.Itoa(int(ev.Interval))
		f[17] = strconv.Itoa(int(ev.StartFrame))
		f[18] = fmt.Sprintf("0x%08x", ev.XferFlags)
		f[19] = strconv.Itoa(int(ev.NDesc))
	}
	return f
}

func compareWithTshark(t *testing.T, file string) int {
	t.Helper()
	rows := tshark(t, file)
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r, _, err := NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	lt := r.(LinkTyper)
	var ev Event
	n, bad := 0, 0
	for {
		err := r.ReadInto(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if n >= len(rows) {
			t.Fatalf("%s: we read more packets than tshark (%d)", file, len(rows))
		}
		ours := ourFields(&ev, lt.LinkType())
		for i, want := range rows[n] {
			if want == "" && (i >= 11 && i <= 13 || i >= 16) {
				continue // tshark leaves it out (decoded elsewhere, or link type 189)
			}
			if ours[i] != want {
				if bad < 10 {
					t.Errorf("%s packet %d %s: ours %q, tshark %q", filepath.Base(file), n+1, tsharkFields[i], ours[i], want)
				}
				bad++
			}
		}
		n++
	}
	if n != len(rows) {
		t.Errorf("%s: we read %d packets, tshark %d", file, n, len(rows))
	}
	return n
}

func sharedUSB(t *testing.T) []string {
	dir := filepath.Join("..", "..", "shared", "testdata", "usb")
	var files []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && (strings.HasSuffix(p, ".pcap") || strings.HasSuffix(p, ".pcapng") || strings.HasSuffix(p, ".cap")) {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Skipf("no public captures in %s", dir)
	}
	return files
}

func TestTsharkAgreesOnPublicCaptures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tshark (slow)")
	}
	for _, f := range sharedUSB(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			n := compareWithTshark(t, f)
			t.Logf("%d packets agree", n)
		})
	}
}

// convertFile writes every event of in to a new file of format f.
func convertFile(t *testing.T, in, out string, f Format) Loss {
	t.Helper()
	src, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	r, _, err := NewReader(src)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	w, err := NewWriter(dst, f)
	if err != nil {
		t.Fatal(err)
	}
	var ev Event
	for {
		err := r.ReadInto(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return w.Loss()
}

func TestTsharkAgreesOnWhatWeWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tshark (slow)")
	}
	files := sharedUSB(t)
	if lab := filepath.Join("..", "testdata", "usbmon", "lab-capture.pcapng"); fileExists(lab) {
		files = append(files, lab)
	}
	for _, f := range files {
		for _, to := range []Format{FormatPcapng, FormatPcap} {
			t.Run(filepath.Base(f)+"-to-"+to.String(), func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out."+to.String())
				convertFile(t, f, out, to)
				n := compareWithTshark(t, out)
				// And what we wrote decodes exactly like the original.
				a, b := readAll(t, f), readAll(t, out)
				if len(a) != len(b) || len(a) != n {
					t.Fatalf("%d events in, %d out, tshark %d", len(a), len(b), n)
				}
				for i := range a {
					if !sameEvent(a[i], b[i]) {
						t.Fatalf("event %d differs after conversion:\n in %+v\nout %+v", i+1, a[i], b[i])
					}
				}
			})
		}
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func readAll(t *testing.T, file string) []*Event {
	t.Helper()
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r, _, err := NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	var evs []*Event
	for {
		ev, err := r.Read()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
}

// sameEvent compares everything but the Format.
func sameEvent(a, b *Event) bool {
	x, y := *a, *b
	x.Format, y.Format = 0, 0
	if !bytes.Equal(x.Data, y.Data) || len(x.ISO) != len(y.ISO) {
		return false
	}
	for i := range x.ISO {
		if x.ISO[i] != y.ISO[i] {
			return false
		}
	}
	x.Data, y.Data, x.ISO, y.ISO = nil, nil, nil, nil
	return fmt.Sprintf("%+v", x) == fmt.Sprintf("%+v", y)
}

// Link type 189 (48-byte headers) as we write it: tshark reads the same
// header fields back.
func TestTsharkAgreesOn189(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tshark (slow)")
	}
	lab := filepath.Join("..", "testdata", "usbmon", "lab-capture.pcapng")
	for _, to := range []Format{FormatPcap, FormatPcapng} {
		out := filepath.Join(t.TempDir(), "out189."+to.String())
		fh, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		var w Writer
		if to == FormatPcap {
			w, err = NewPcapWriter(fh, LinkTypeUSBLinux)
		} else {
			w, err = NewPcapngWriter(fh, LinkTypeUSBLinux)
		}
		if err != nil {
			t.Fatal(err)
		}
		evs := readAll(t, lab)
		for _, ev := range evs {
			w.Write(ev)
		}
		w.Flush()
		fh.Close()
		if l := w.Loss(); l.Count(LossExtended) == 0 {
			t.Errorf("189 lost no interval/xfer flags? %v", l)
		}
		if n := compareWithTshark(t, out); n != len(evs) {
			t.Errorf("%s: %d of %d events", to, n, len(evs))
		}
	}
}

// Kernel text converted to pcapng: tshark reads what the text said, and
// converting back gives the kernel's lines byte for byte.
func TestTsharkAgreesOnTextWeConvert(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tshark (slow)")
	}
	for _, name := range []string{"lab-0u.txt", "lab-hidbus-t.txt", "lab-capture.0u"} {
		in := labFile(name)
		out := filepath.Join(t.TempDir(), "text.pcapng")
		convertFile(t, in, out, FormatPcapng)
		rows := tshark(t, out)
		txt := readAll(t, in)
		if len(rows) != len(txt) {
			t.Fatalf("%s: tshark %d packets, text %d events", name, len(rows), len(txt))
		}
		for i, ev := range txt {
			r := rows[i]
			want := []string{fmt.Sprintf("0x%016x", ev.ID), "'" + string(rune(ev.Type)) + "'", fmt.Sprintf("0x%02x", uint8(ev.Transfer)),
				fmt.Sprintf("0x%02x", ev.EndpointAddress()), strconv.Itoa(int(ev.Device)), strconv.Itoa(int(ev.Bus)),
				strconv.Itoa(int(ev.Status)), strconv.FormatUint(uint64(ev.Length), 10), strconv.Itoa(len(ev.Data))}
			for j, w := range want {
				if r[j] != w {
					t.Fatalf("%s event %d %s: tshark %q, text %q", name, i+1, tsharkFields[j], r[j], w)
				}
			}
		}
		back := filepath.Join(t.TempDir(), "back.txt")
		_, format, _ := NewReader(bytes.NewReader(mustRead(t, in)))
		convertFile(t, out, back, format)
		if !bytes.Equal(mustRead(t, back), mustRead(t, in)) {
			t.Errorf("%s -> pcapng -> %s is not byte for byte", name, format)
		}
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Records cut short (iotap usb capture --snaplen): the header keeps the
// kernel's lengths; tshark reads the same fields.
func TestTsharkAgreesOnCutRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tshark (slow)")
	}
	evs := readAll(t, labFile("lab-capture.pcapng"))
	out := filepath.Join(t.TempDir(), "cut.pcapng")
	fh, _ := os.Create(out)
	w, _ := NewPcapngWriter(fh, LinkTypeUSBLinuxMmapped)
	cut := 0
	for _, ev := range evs {
		if len(ev.Data) > 16 {
			ev.Data = ev.Data[:16]
			cut++
		}
		w.Write(ev)
	}
	w.Flush()
	fh.Close()
	if cut == 0 {
		t.Fatal("nothing to cut")
	}
	if n := compareWithTshark(t, out); n != len(evs) {
		t.Fatalf("%d of %d", n, len(evs))
	}
	for _, ev := range readAll(t, out) {
		if len(ev.Data) > 16 {
			t.Fatal("data longer than cut")
		}
	}
}

// tsharkFiles reads a sequence of capture files as Wireshark does, with
// three processes whatever their number (one tshark per file took minutes
// for the lab's hundred files under load): capinfos reads each file on
// its own and counts its packets (perFile, in the order of files), then
// mergecap concatenates them (it too reads each file on its own and fails
// on one that does not) and tshark decodes the whole (rows, in file
// order).
func tsharkFiles(t *testing.T, files []string) (rows [][]string, perFile []int) {
	t.Helper()
	capinfos, err1 := exec.LookPath("capinfos")
	mergecap, err2 := exec.LookPath("mergecap")
	if err1 != nil || err2 != nil {
		t.Skip("capinfos/mergecap not installed (apt-get install tshark)")
	}
	out, err := exec.Command(capinfos, append([]string{"-M", "-T", "-r", "-t", "-c"}, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("capinfos: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(files) {
		t.Fatalf("capinfos reads %d of %d files:\n%s", len(lines), len(files), out)
	}
	for i, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 3 || f[0] != files[i] || f[1] != "pcapng" {
			t.Fatalf("capinfos: %q, want %s as pcapng", l, files[i])
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			t.Fatalf("capinfos: %q: %v", l, err)
		}
		perFile = append(perFile, n)
	}
	merged := filepath.Join(t.TempDir(), "merged.pcapng")
	if out, err := exec.Command(mergecap, append([]string{"-a", "-F", "pcapng", "-w", merged}, files...)...).CombinedOutput(); err != nil {
		t.Fatalf("mergecap: %v\n%s", err, out)
	}
	return tshark(t, merged), perFile
}
