package usb

import (
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/iotap/iotap/usbmon"
)

// tsharkFields are the fields the oracle test asks tshark for, in order.
var tsharkFields = []string{
	"frame.number", "usb.urb_type", "usb.request_in", "usb.bmRequestType", "usb.setup.bRequest",
	"usb.setup.wValue", "usb.setup.wIndex", "usb.setup.wLength", "usb.bDescriptorType", "usb.DescriptorIndex",
	"usb.LanguageId", "usb.idVendor", "usb.idProduct", "usb.wTotalLength", "usb.bInterfaceClass",
	"usb.bEndpointAddress", "usb.bString", "usb.bNumConfigurations",
	"usbhub.setup.bRequest", "usbhub.setup.wLength", "usbhid.setup.bRequest", "usbhid.setup.wLength",
	"usbms.setup.bRequest", "usbms.setup.wLength", "usbhub.status.port", "usbhub.change.port",
	"usbms.dCBWTag", "usbms.dCBWDataTransferLength", "usbms.dCBWLUN", "scsi_sbc.opcode",
	"usbms.dCSWDataResidue", "usbms.dCSWStatus", "usbhid.item.bTag", "usbhid.item.bType",
	"usbhid.descriptor.hid.bDescriptorType", "usbhid.descriptor.hid.bDescriptorIndex",
	"usbhid.descriptor.hid.wDescriptorLength", "usbhid.descriptor.hid.wInterfaceNumber",
}

// classPrefix maps the class tshark dissected a request with to ours.
var classPrefix = map[string]uint8{"usbhub.": ClassHub, "usbhid.": ClassHID, "usbms.": ClassMassStorage}

// tsharkRows runs tshark over path and returns one map of field -> value
// per frame.
func tsharkRows(t *testing.T, path string) []map[string]string {
	t.Helper()
	args := []string{"-r", path, "-T", "fields", "-E", "separator=|", "-E", "occurrence=a"}
	for _, f := range tsharkFields {
		args = append(args, "-e", f)
	}
	cmd := exec.Command(needTshark(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v: %s", err, stderr.String())
	}
	var rows []map[string]string
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		cols := strings.Split(line, "|")
		if len(cols) != len(tsharkFields) {
			t.Fatalf("tshark line %q has %d columns, want %d", line, len(cols), len(tsharkFields))
		}
		m := map[string]string{}
		for i, f := range tsharkFields {
			m[f] = cols[i]
		}
		rows = append(rows, m)
	}
	return rows
}

func num(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		t.Fatalf("tshark value %q: %v", s, err)
	}
	return v
}

func hexList(vals []uint8) string {
	var parts []string
	for _, v := range vals {
		parts = append(parts, fmt.Sprintf("0x%02x", v))
	}
	return strings.Join(parts, ",")
}

// configTypes lists the descriptor types of a configuration in wire order.
func configTypes(b []byte) []uint8 {
	var ts []uint8
	for off := 0; off+2 <= len(b) && b[off] >= 2; off += int(b[off]) {
		ts = append(ts, b[off+1])
	}
	return ts
}

// TestTsharkOracle checks pairing, setup fields and descriptor decoding
// against tshark, frame by frame, on the public captures.
func TestTsharkOracle(t *testing.T) {
	t.Run("lab-decode.pcapng", func(t *testing.T) {
		// Recorded by TestLabDecode (IOTAP_USB_LAB_SAVE): enumeration
		// with a HID report descriptor, usb-storage probing and reads.
		path := "testdata/lab-decode.pcapng"
		rows := tsharkRows(t, path)
		evs := readAll(t, path)
		if len(rows) != len(evs) {
			t.Fatalf("tshark sees %d frames, we read %d events", len(rows), len(evs))
		}
		t.Logf("%d frames, %d field comparisons", len(evs), oracleCompare(t, evs, rows))
	})
	// The unlicensed-usbrply-test captures are read in place, never copied.
	files := []string{"km003c-adc-1000hz.pcapng", "km003c-pd-capture.pcapng", "usbmon-tools-test1.pcap",
		"unlicensed-usbrply-test/fx2.cap", "unlicensed-usbrply-test/lin_control-in.pcapng",
		"unlicensed-usbrply-test/lin_control-out.pcap", "unlicensed-usbrply-test/lin_control-out.pcapng",
		"unlicensed-usbrply-test/lin_interrupt-in.pcapng", "unlicensed-usbrply-test/lin_interrupt-out.pcapng",
		"unlicensed-usbrply-test/lin_misc_control.pcap", "unlicensed-usbrply-test/lin_setup.pcapng"}
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			path := sharedCapture(t, name)
			rows := tsharkRows(t, path)
			evs := readAll(t, path)
			if len(rows) != len(evs) {
				t.Fatalf("tshark sees %d frames, we read %d events", len(rows), len(evs))
			}
			checked := oracleCompare(t, evs, rows)
			t.Logf("%d frames, %d field comparisons", len(evs), checked)
			if checked < len(evs) {
				t.Errorf("only %d comparisons for %d frames", checked, len(evs))
			}
		})
	}
}

func oracleCompare(t *testing.T, evs []*usbmon.Event, rows []map[string]string) int {
	t.Helper()
	p := NewPairer()
	checked := 0
	for i, ev := range evs {
		row := rows[i]
		frame := i + 1
		eq := func(field string, want string, got string) {
			t.Helper()
			checked++
			if want != got {
				t.Errorf("frame %d %s: tshark %q, we %q", frame, field, want, got)
			}
		}
		pr, paired := p.Add(ev)
		eq("usb.urb_type", fmt.Sprintf("'%c'", ev.Type), row["usb.urb_type"])
		if ev.Type == usbmon.Callback {
			got := ""
			if paired {
				got = strconv.FormatUint(pr.Submit.Seq+1, 10)
			}
			eq("usb.request_in", row["usb.request_in"], got)
		}
		if ev.Transfer == usbmon.Bulk && ev.HasData() {
			switch {
			case IsCBW(ev.Data):
				c, err := ParseCBW(ev.Data)
				if err != nil {
					t.Errorf("frame %d: %v", frame, err)
				}
				eq("usbms.dCBWTag", row["usbms.dCBWTag"], fmt.Sprintf("0x%08x", c.Tag))
				eq("usbms.dCBWDataTransferLength", row["usbms.dCBWDataTransferLength"], strconv.Itoa(int(c.DataTransferLength)))
				eq("usbms.dCBWLUN", row["usbms.dCBWLUN"], fmt.Sprintf("0x%02x", c.LUN))
				eq("scsi_sbc.opcode", row["scsi_sbc.opcode"], fmt.Sprintf("0x%02x", c.CB[0]))
			case IsCSW(ev.Data):
				c, err := ParseCSW(ev.Data)
				if err != nil {
					t.Errorf("frame %d: %v", frame, err)
				}
				eq("usbms.dCBWTag (csw)", row["usbms.dCBWTag"], fmt.Sprintf("0x%08x", c.Tag))
				eq("usbms.dCSWDataResidue", row["usbms.dCSWDataResidue"], strconv.Itoa(int(c.Residue)))
				eq("usbms.dCSWStatus", row["usbms.dCSWStatus"], fmt.Sprintf("0x%02x", c.Status))
			}
		}
		if ev.Transfer != usbmon.Control {
			continue
		}
		if ev.Type == usbmon.Submission && ev.HasSetup() {
			s, err := ParseSetup(ev.Setup[:])
			if err != nil {
				t.Fatal(err)
			}
			eq("usb.bmRequestType", row["usb.bmRequestType"], fmt.Sprintf("0x%02x", s.RequestType))
			if row["usbhid.descriptor.hid.bDescriptorType"] != "" {
				// GET_DESCRIPTOR to a HID interface: tshark's HID
				// dissector shows it without bRequest.
				eq("request", "GET_DESCRIPTOR", s.Name(0))
				eq("usbhid.descriptor.hid.bDescriptorType", row["usbhid.descriptor.hid.bDescriptorType"], fmt.Sprintf("0x%02x", s.DescriptorType()))
				eq("usbhid.descriptor.hid.bDescriptorIndex", row["usbhid.descriptor.hid.bDescriptorIndex"], fmt.Sprintf("0x%02x", s.DescriptorIndex()))
				eq("usbhid.descriptor.hid.wDescriptorLength", row["usbhid.descriptor.hid.wDescriptorLength"], strconv.Itoa(int(s.Length)))
				eq("usbhid.descriptor.hid.wInterfaceNumber", row["usbhid.descriptor.hid.wInterfaceNumber"], strconv.Itoa(int(s.Index)))
				continue
			}
			prefix := "usb."
			for pfx, class := range classPrefix {
				if row[pfx+"setup.bRequest"] != "" {
					prefix = pfx
					// tshark picked the class from the interface
					// descriptors it saw; without them we guess.
					eq("request class", strconv.Itoa(int(class)), strconv.Itoa(int(s.requestClass(0))))
				}
			}
			eq(prefix+"setup.bRequest", strconv.FormatUint(num(t, row[prefix+"setup.bRequest"]), 10), strconv.Itoa(int(s.Request)))
			eq(prefix+"setup.wLength", strconv.FormatUint(num(t, row[prefix+"setup.wLength"]), 10), strconv.Itoa(int(s.Length)))
			if s.Kind() == KindStandard && s.Request == ReqGetDescriptor {
				eq("usb.bDescriptorType", row["usb.bDescriptorType"], fmt.Sprintf("0x%02x", s.DescriptorType()))
				eq("usb.DescriptorIndex", row["usb.DescriptorIndex"], fmt.Sprintf("0x%02x", s.DescriptorIndex()))
				eq("usb.LanguageId", row["usb.LanguageId"], fmt.Sprintf("0x%04x", s.Index))
			} else {
				if v := row["usb.setup.wValue"]; v != "" {
					eq("usb.setup.wValue", strconv.FormatUint(num(t, v), 10), strconv.Itoa(int(s.Value)))
				}
				if v := row["usb.setup.wIndex"]; v != "" {
					eq("usb.setup.wIndex", strconv.FormatUint(num(t, v), 10), strconv.Itoa(int(s.Index)))
				}
			}
			continue
		}
		if ev.Type != usbmon.Callback || !paired || !pr.Submit.HasSetup || !ev.HasData() {
			continue
		}
		s := pr.Submit.Setup
		if s.Kind() == KindClass && s.requestClass(0) == ClassHub && s.Request == ReqGetStatus && s.Recipient() == RecipientOther {
			ps, err := ParsePortStatus(ev.Data)
			if err == nil && row["usbhub.status.port"] != "" {
				eq("usbhub.status.port", row["usbhub.status.port"], fmt.Sprintf("0x%04x", ps.Status))
				eq("usbhub.change.port", row["usbhub.change.port"], fmt.Sprintf("0x%04x", ps.Change))
			}
			continue
		}
		if s.Kind() != KindStandard || s.Request != ReqGetDescriptor {
			continue
		}
		if len(ev.Data) < int(ev.Length) {
			// Cut by the capture (usbmon text keeps 32 bytes): tshark
			// and we show different amounts of a partial descriptor.
			continue
		}
		d := DecodeDescriptor(s, ev.Data)
		switch v := d.Detail.(type) {
		case DeviceDescriptor:
			if v.Len >= 12 {
				eq("usb.idVendor", row["usb.idVendor"], fmt.Sprintf("0x%04x", v.Vendor))
				eq("usb.idProduct", row["usb.idProduct"], fmt.Sprintf("0x%04x", v.Product))
			}
			if v.Len == 18 {
				eq("usb.bNumConfigurations", row["usb.bNumConfigurations"], strconv.Itoa(int(v.NumConfigurations)))
			}
		case ConfigDescriptor:
			if d.Err != nil {
				t.Errorf("frame %d: %v", frame, d.Err)
			}
			eq("usb.wTotalLength", row["usb.wTotalLength"], strconv.Itoa(int(v.TotalLength)))
			eq("usb.bDescriptorType", row["usb.bDescriptorType"], hexList(configTypes(ev.Data[:v.Len])))
			var classes, eps []uint8
			for _, i := range v.Interfaces {
				classes = append(classes, i.Class)
				for _, e := range i.Endpoints {
					eps = append(eps, e.Address)
				}
			}
			eq("usb.bInterfaceClass", row["usb.bInterfaceClass"], hexList(classes))
			eq("usb.bEndpointAddress", row["usb.bEndpointAddress"], hexList(eps))
		case ReportDescriptor:
			if d.Err == nil {
				var tags, types []string
				for _, it := range v.Items {
					if it.Type == HIDLong {
						continue
					}
					tags = append(tags, fmt.Sprintf("0x%02x", it.Tag))
					types = append(types, strconv.Itoa(int(it.Type)))
				}
				eq("usbhid.item.bTag", row["usbhid.item.bTag"], strings.Join(tags, ","))
				eq("usbhid.item.bType", row["usbhid.item.bType"], strings.Join(types, ","))
			}
		case StringDescriptor:
			if v.LangIDs == nil {
				eq("usb.bString", row["usb.bString"], strings.TrimRight(v.Text, "\x00"))
			}
		}
	}
	return checked
}
