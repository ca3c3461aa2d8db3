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
	vidpids := vidpidCache{}
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
		e.URBType = string(rune(ev.Type))
		e.URBID = ev.ID
		e.Transfer = ev.Transfer.String()
		e.Bus, e.Dev, e.EP = int32(ev.Bus), int32(ev.Device), int32(ev.EndpointAddress())
		e.Synthesized = ev.Synthesized
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
				request = ptr(s.Name(usb.ClassHint(ids, ev.Bus, ev.Device, s)))
			}
		}
		if paired && p.Submit.HasSetup {
			request = ptr(p.Submit.Setup.Name(usb.ClassHint(ids, ev.Bus, ev.Device, p.Submit.Setup)))
		}
		e.Request = request
		if d.Summary != "" {
			e.Summary = ptr(d.Summary)
		}
		info, known := ids.Lookup(ev.Bus, ev.Device)
		if known && info.HasID {
			e.VendorID, e.ProductID = ptr(int32(info.Vendor)), ptr(int32(info.Product))
			e.VIDPID = vidpids.of(info.Vendor, info.Product)
		}
		if paired {
			e.LatencyNS = ptr(p.Latency * 1000)
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
		t.TSNS = tsNS
		t.SubmitTSNS = tsNS - p.Latency*1000
		t.LatencyNS = *e.LatencyNS
		t.URBID = ev.ID
		t.Bus, t.Dev, t.EP = e.Bus, e.Dev, e.EP
		t.Transfer = e.Transfer
		t.Status, t.StatusName = ev.Status, *e.StatusName
		t.Outcome = usbOutcome(&ev)
		t.Requested, t.Actual = int64(p.Submit.Length), int64(ev.Length)
		if known && info.HasID {
			t.VendorID, t.ProductID, t.VIDPID = e.VendorID, e.ProductID, e.VIDPID
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
	var nSkipped, nDropped uint64
	if s, ok := rd.(usbmon.Skipper); ok && s.Skipped() > 0 {
		nSkipped = uint64(s.Skipped())
		row.SkippedLines = int64(nSkipped)
	}
	if d, ok := rd.(interface{ Dropped() uint64 }); ok && d.Dropped() > 0 {
		nDropped = d.Dropped()
		row.LostEvents = int64(nDropped)
	}
	counted, _ := usbmon.InputLoss(nil, nSkipped, nDropped) // the words of every command
	lost = append(lost, counted...)
	row.Loss = strings.Join(lost, "; ")
	if err := events.commit(); err != nil {
		transfers.abort()
		return err
	}
	return transfers.commit()
}

// vidpidCache keeps one "vvvv:pppp" string per device identity, shared by
// the rows (no formatting per event).
type vidpidCache map[uint32]*string

func (c vidpidCache) of(vendor, product uint16) *string {
	k := uint32(vendor)<<16 | uint32(product)
	if s, ok := c[k]; ok {
		return s
	}
	s := ptr(fmt.Sprintf("%04x:%04x", vendor, product))
	c[k] = s
	return s
}
