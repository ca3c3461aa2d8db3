package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

// usbClockDomain names the clock of a usbmon source's timestamps.
func usbClockDomain(ev *usbmon.Event) string {
	if ev.Fields&usbmon.HasWallClock != 0 {
		return "realtime"
	}
	return "usbmon-text"
}

// textUnwrapper turns the usbmon text stamp (µs modulo 4096 s) into a
// growing count of µs: 4096 s are added per wrap seen.
type textUnwrapper struct {
	prev  int64
	wraps int64
	seen  bool
}

const textWrapUS = 4096 * 1000000

func (u *textUnwrapper) unwrap(stamp int64) int64 {
	if u.seen && stamp < u.prev-textWrapUS/2 {
		u.wraps++
	}
	u.prev, u.seen = stamp, true
	return stamp + u.wraps*textWrapUS
}

// usbOutcome classifies a completion status as usb stats does.
func usbOutcome(ev *usbmon.Event) string {
	switch {
	case ev.Type == usbmon.SubmitError:
		return "submit_error"
	case ev.Status == 0:
		return "ok"
	case usb.IsStall(ev.Status):
		return "stall"
	case usb.IsCancel(ev.Status):
		return "cancelled"
	case ev.Status < 0 && ev.Status != -18:
		return "error"
	}
	return "ok"
}

// exportUSB streams a usbmon capture into usb_events and usb_transfers.
func (x *Exporter) exportUSB(ctx context.Context, c *capture, path string, r io.Reader, row *CaptureRow) error {
	var skipped int64
	rd, format, err := usbmon.NewReaderOptions(r, usbmon.ReaderOptions{KeepGoing: x.opt.KeepGoing, OnSkip: func(error) { skipped++ }})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	row.Source, row.Format = "usb", format.String()
	events := &lazyTable[USBEventRow]{x: x, name: TableUSBEvents, c: c, src: path}
	transfers := &lazyTable[USBTransferRow]{x: x, name: TableUSBTransfers, c: c, src: path}
	pairer, ids := usb.NewPairer(), usb.NewIdentities()
	dec := usb.NewDecoder(ids)
	var (
		ev      usbmon.Event
		unwrap  textUnwrapper
		id      Identity
		idSet   bool
		readErr error
		firstTS int64
		lastTS  int64
	)
	for n := int64(0); ; n++ {
		if n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				events.abort()
				transfers.abort()
				return err
			}
		}
		err := rd.ReadInto(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		if !idSet {
			id = c.id
			id.SourceFile, id.ClockDomain = path, usbClockDomain(&ev)
			row.ClockDomain = id.ClockDomain
			idSet = true
		}
		var tsNS int64
		if ev.Fields&usbmon.HasWallClock != 0 {
			tsNS = usb.Micros(&ev) * 1000
		} else {
			tsNS = unwrap.unwrap(usb.Micros(&ev)) * 1000
		}
		if row.Records == 0 {
			firstTS = tsNS
		}
		lastTS = tsNS
		row.Records++
		p, paired := pairer.Add(&ev)
		ids.Learn(&ev, p, paired)
		d := dec.Decode(&ev, p, paired)

		e, err := events.next()
		if err != nil {
			return err
		}
		e.Identity = id
		e.Seq = n + 1
		e.TSNS = tsNS
		e.EventType = string(rune(ev.Type))
		e.URBID = ev.ID
		e.Transfer = ev.Transfer.String()
		e.Direction = direction(ev.In)
		e.Bus, e.Device, e.Endpoint = int32(ev.Bus), int32(ev.Device), int32(ev.Endpoint)
		if ev.Type != usbmon.Submission {
			e.Status = ptr(ev.Status)
			e.StatusName = ptr(usb.StatusName(ev.Status))
		}
		e.Length = int64(ev.Length)
		if ev.HasData() {
			e.DataLength = int64(len(ev.Data))
		}
		var request *string
		if ev.HasSetup() && ev.Type == usbmon.Submission {
			e.Setup = append([]byte(nil), ev.Setup[:]...)
			if s, err := usb.ParseSetup(ev.Setup[:]); err == nil {
				request = ptr(s.Name(hintFor(ids, ev.Bus, ev.Device, s)))
			}
		}
		if paired && p.Submit.HasSetup {
			request = ptr(p.Submit.Setup.Name(hintFor(ids, ev.Bus, ev.Device, p.Submit.Setup)))
		}
		e.Request = request
		if d.Summary != "" {
			e.Summary = ptr(d.Summary)
		}
		info, known := ids.Lookup(ev.Bus, ev.Device)
		if known && info.HasID {
			e.VendorID, e.ProductID = ptr(int32(info.Vendor)), ptr(int32(info.Product))
		}
		if paired {
			e.LatencyUS = ptr(p.Latency)
			e.SubmitSeq = ptr(int64(p.Submit.Seq) + 1)
		}
		if !paired {
			continue
		}
		t, err := transfers.next()
		if err != nil {
			return err
		}
		t.Identity = id
		t.SubmitSeq, t.CompleteSeq = int64(p.Submit.Seq)+1, n+1
		t.CompleteTSNS = tsNS
		t.SubmitTSNS = tsNS - p.Latency*1000
		t.LatencyUS = p.Latency
		t.Bus, t.Device, t.Endpoint = int32(ev.Bus), int32(ev.Device), int32(ev.EndpointAddress())
		t.Transfer, t.Direction = e.Transfer, e.Direction
		t.Status, t.StatusName = ev.Status, *e.StatusName
		t.Outcome = usbOutcome(&ev)
		t.Requested, t.Bytes = int64(p.Submit.Length), int64(ev.Length)
		if known && info.HasID {
			t.VendorID, t.ProductID = e.VendorID, e.ProductID
			t.VIDPID = ptr(fmt.Sprintf("%04x:%04x", info.Vendor, info.Product))
		}
		if known && info.Manufacturer != "" {
			t.Manufacturer = ptr(info.Manufacturer)
		}
		if known && info.ProductName != "" {
			t.Product = ptr(info.ProductName)
		}
		if _, class, ok := ids.InterfaceOf(ev.Bus, ev.Device, ev.EndpointAddress()); ok {
			t.InterfaceClass = ptr(int32(class))
		}
		t.Request, t.Summary = request, e.Summary
	}
	if row.Records > 0 {
		row.FirstTSNS, row.LastTSNS = ptr(firstTS), ptr(lastTS)
	}
	var lost []string
	if readErr != nil {
		if errors.Is(readErr, usbmon.ErrTruncated) {
			row.Truncated = true
			lost = append(lost, readErr.Error())
		} else {
			row.Complete = false
			lost = append(lost, "stopped at a decoding error: "+readErr.Error())
		}
	}
	if s, ok := rd.(usbmon.Skipper); ok && s.Skipped() > 0 {
		row.SkippedLines = int64(s.Skipped())
		lost = append(lost, fmt.Sprintf("%d unreadable lines skipped", s.Skipped()))
	}
	if d, ok := rd.(interface{ Dropped() uint64 }); ok && d.Dropped() > 0 {
		row.LostEvents = int64(d.Dropped())
		lost = append(lost, fmt.Sprintf("the capture records %d events dropped by the kernel", d.Dropped()))
	}
	row.Loss = strings.Join(lost, "; ")
	if err := events.commit(); err != nil {
		transfers.abort()
		return err
	}
	return transfers.commit()
}

func direction(in bool) string {
	if in {
		return "in"
	}
	return "out"
}

// hintFor returns the interface class a class-specific request is
// addressed to, for naming it (0 when unknown).
// (The same rule as iotap usb read: the interface's class for requests to
// an interface, else the device's class.)
func hintFor(ids *usb.Identities, bus uint16, dev uint8, s usb.Setup) uint8 {
	info, ok := ids.Lookup(bus, dev)
	if !ok {
		return 0
	}
	if s.Recipient() == usb.RecipientInterface {
		return info.InterfaceClass(uint8(s.Index))
	}
	return info.Class
}
