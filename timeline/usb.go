package timeline

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/iotap/iotap/usb"
	"github.com/iotap/iotap/usbmon"
)

// textWrapUS is the period of the usbmon text API's timestamps.
const textWrapUS = 4096 * 1000000

// usbSource draws USB transfers: one track per bus, device and endpoint;
// a transfer is a slice from its submission to its completion (on a lane
// of its endpoint when several are in flight), with the decoded request as
// arguments; submission errors and orphan completions are instants; the
// bytes completed per device are a bandwidth counter.
type usbSource struct {
	closer io.Closer
	rd     usbmon.Reader
	in     *InputStats
	ev     usbmon.Event

	// text timestamp unwrapping
	lastStamp uint32
	wraps     int64
	stamped   bool

	pairer  *usb.Pairer
	decoder *usb.Decoder
	ids     *usb.Identities // what the decoder knows: learned from enumeration and injected descriptors
	buses   map[uint16]uint64
	devices map[devKey]*usbDevice
	devList []*usbDevice // devices in order of appearance: output is deterministic
	pending map[usb.Key]*lane
	max     int
	lastTS  uint64
	ov      map[usbOvKey]*usbOv
}

type devKey struct {
	bus uint16
	dev uint8
}

type usbDevice struct {
	track     uint64
	counter   uint64
	endpoints map[epKey]*endpoint
	// bandwidth window
	winStart uint64
	bytes    uint64
	active   bool // a non-zero value is displayed
}

type epKey struct {
	addr uint8
	typ  usbmon.TransferType
}

type endpoint struct {
	name  string
	dev   uint64
	lanes []*lane
}

type lane struct {
	track uint64
	busy  bool
	ep    *endpoint
	index int
}

// NewUSBSource adapts a usbmon reader (a file's, or a live capture's) to
// a timeline Source named name. Close closes r when it is an io.Closer.
func NewUSBSource(name string, r usbmon.Reader) Source {
	s := newUSBSource(r, &InputStats{Path: name, Kind: KindUSB}, r.Format())
	if c, ok := r.(io.Closer); ok {
		s.closer = c
	}
	return s
}

func openUSB(f io.Closer, br *bufio.Reader, in *InputStats, _ *Options) ([]Source, error) {
	rd, format, err := usbmon.NewReader(br)
	if err != nil {
		return nil, err
	}
	s := newUSBSource(rd, in, format)
	s.closer = f
	return []Source{s}, nil
}

func newUSBSource(rd usbmon.Reader, in *InputStats, format usbmon.Format) *usbSource {
	in.Format = "usbmon " + format.String()
	in.Clock = "usbmon wall clock (CLOCK_REALTIME)"
	ids := usb.NewIdentities()
	return &usbSource{
		rd: rd, in: in,
		pairer:  usb.NewPairer(),
		ids:     ids,
		decoder: usb.NewDecoder(ids),
		buses:   map[uint16]uint64{},
		devices: map[devKey]*usbDevice{},
		pending: map[usb.Key]*lane{},
		max:     usb.DefaultMaxPending,
	}
}

func (s *usbSource) Info() *InputStats { return s.in }
func (s *usbSource) Close() error      { return closeIf(s.closer) }
func (s *usbSource) skipped() int64 {
	if sk, ok := s.rd.(usbmon.Skipper); ok {
		return int64(sk.Skipped())
	}
	return 0
}

func (s *usbSource) Next() (int64, error) {
	err := s.rd.ReadInto(&s.ev)
	s.in.Skipped = s.skipped()
	if err == io.ErrUnexpectedEOF || errors.Is(err, usbmon.ErrTruncated) {
		// A cut capture: what came before is drawn, the loss reported.
		s.in.Truncated = true
		s.in.Truncation = err.Error()
		return 0, io.EOF
	}
	if err != nil {
		return 0, err
	}
	ev := &s.ev
	if ev.Fields&usbmon.HasWallClock != 0 {
		return ev.Sec*1e9 + int64(ev.Usec)*1e3, nil
	}
	s.in.Clock = "usbmon text (monotonic µs modulo 4096 s, unwrapped)"
	st := ev.TextStamp
	if s.stamped && st < s.lastStamp && s.lastStamp-st > textWrapUS/2 {
		s.wraps++
	}
	s.stamped = true
	s.lastStamp = st
	return (s.wraps*textWrapUS + int64(st)) * 1000, nil
}

func (s *usbSource) device(c *Canvas, ev *usbmon.Event, ts uint64) *usbDevice {
	k := devKey{ev.Bus, ev.Device}
	if d, ok := s.devices[k]; ok {
		return d
	}
	bus, ok := s.buses[ev.Bus]
	if !ok {
		bus = c.W.Track(c.Top, fmt.Sprintf("bus %d", ev.Bus), TrackOptions{})
		s.buses[ev.Bus] = bus
	}
	d := &usbDevice{endpoints: map[epKey]*endpoint{}}
	d.track = c.W.Track(bus, fmt.Sprintf("device %d:%03d", ev.Bus, ev.Device), TrackOptions{})
	d.counter = c.W.Track(d.track, fmt.Sprintf("%d:%03d bandwidth", ev.Bus, ev.Device), TrackOptions{
		Counter: true, Unit: UnitSizeBytes, UnitName: "B/s",
		Description: "bytes completed per second, averaged over the bandwidth window",
	})
	d.winStart = ts
	s.devices[k] = d
	s.devList = append(s.devList, d)
	return d
}

func (s *usbSource) endpoint(c *Canvas, d *usbDevice, ev *usbmon.Event) *endpoint {
	k := epKey{ev.EndpointAddress(), ev.Transfer}
	if ev.Transfer == usbmon.Control {
		k.addr = ev.Endpoint // one track for both directions
	}
	if e, ok := d.endpoints[k]; ok {
		return e
	}
	name := fmt.Sprintf("ep %d %s", ev.Endpoint, ev.Transfer)
	if ev.Transfer != usbmon.Control {
		dir := "OUT"
		if ev.In {
			dir = "IN"
		}
		name = fmt.Sprintf("ep %d %s %s", ev.Endpoint, dir, ev.Transfer)
	}
	e := &endpoint{name: name, dev: d.track}
	d.endpoints[k] = e
	return e
}

// freeLane returns the endpoint's first idle lane, creating one.
func (e *endpoint) freeLane(c *Canvas) *lane {
	for _, l := range e.lanes {
		if !l.busy {
			return l
		}
	}
	name := e.name
	if len(e.lanes) > 0 {
		name = fmt.Sprintf("%s #%d", e.name, len(e.lanes)+1)
	}
	l := &lane{track: c.W.Track(e.dev, name, TrackOptions{}), ep: e, index: len(e.lanes)}
	e.lanes = append(e.lanes, l)
	return l
}

func transferName(ev *usbmon.Event) string {
	dir := "OUT"
	if ev.In {
		dir = "IN"
	}
	return ev.Transfer.String() + " " + dir
}

func (s *usbSource) Draw(c *Canvas, ts uint64) {
	ev := &s.ev
	s.lastTS = ts
	d := s.device(c, ev, ts)
	pair, paired := s.pairer.Add(ev)
	s.ids.Learn(ev, pair, paired)
	dec := s.decoder.Decode(ev, pair, paired)
	key := usb.KeyOf(ev)
	switch ev.Type {
	case usbmon.Submission:
		if old, ok := s.pending[key]; ok {
			// The kernel cannot submit a URB twice: the completion of the
			// first was lost.
			c.W.End(old.track, ts, Str("completion", "lost: URB id submitted again"))
			old.busy = false
			delete(s.pending, key)
			s.in.Unmatched++
		}
		if len(s.pending) >= s.max {
			s.in.Overflow++
			return
		}
		e := s.endpoint(c, d, ev)
		l := e.freeLane(c)
		l.busy = true
		s.pending[key] = l
		name := transferName(ev)
		args := make([]Arg, 0, 6)
		args = append(args, Hex("urb", ev.ID), Uint("length", uint64(ev.Length)))
		if ev.HasSetup() {
			if st, err := usb.ParseSetup(ev.Setup[:]); err == nil {
				name = st.Name(0)
				args = append(args, Str("setup", st.String()))
			}
		}
		if dec.Summary != "" {
			args = append(args, Str("request", dec.Summary))
		}
		if ev.Interval != 0 {
			args = append(args, Int("interval", int64(ev.Interval)))
		}
		c.W.Begin(l.track, ts, "usb", name, args...)
		s.in.Slices++
	case usbmon.Callback:
		s.count(d, ev, ts)
		l, ok := s.pending[key]
		if !ok {
			s.in.Orphans++
			e := s.endpoint(c, d, ev)
			if len(e.lanes) == 0 {
				e.freeLane(c)
			}
			c.W.Instant(e.lanes[0].track, ts, "usb", "orphan completion",
				Hex("urb", ev.ID), Str("status", usb.StatusName(ev.Status)), Uint("actual", uint64(ev.Length)))
			return
		}
		delete(s.pending, key)
		l.busy = false
		args := make([]Arg, 0, 4)
		args = append(args, Str("status", usb.StatusName(ev.Status)), Uint("actual", uint64(ev.Length)))
		if dec.Summary != "" {
			args = append(args, Str("response", dec.Summary))
		}
		if paired {
			args = append(args, Int("latency_us", pair.Latency))
		}
		c.W.End(l.track, ts, args...)
	default: // submission error
		e := s.endpoint(c, d, ev)
		if len(e.lanes) == 0 {
			e.freeLane(c)
		}
		c.W.Instant(e.lanes[0].track, ts, "usb", "submission error",
			Hex("urb", ev.ID), Str("status", usb.StatusName(ev.Status)))
	}
}

// count adds a completion's bytes to its device's bandwidth window.
func (s *usbSource) count(d *usbDevice, ev *usbmon.Event, ts uint64) {
	d.bytes += uint64(ev.Length)
}

// flush writes the bandwidth of every device whose window ended by now
// (now is ^uint64(0) at the end of the input). A value is written at the
// start of each window with traffic, and a 0 after the last one.
func (s *usbSource) Flush(c *Canvas, now uint64) {
	w := uint64(c.opt.BandwidthWindowNS)
	for _, d := range s.devList {
		for d.winStart+w <= now {
			if d.bytes > 0 || d.active {
				c.W.Counter(d.counter, d.winStart, float64(d.bytes)*1e9/float64(w))
				d.active = d.bytes > 0
			}
			d.bytes = 0
			if !d.active {
				if now != ^uint64(0) {
					// Idle: skip to the window holding now.
					d.winStart += (now - d.winStart) / w * w
				}
				break
			}
			d.winStart += w
		}
	}
}

func (s *usbSource) Finish(c *Canvas, ts uint64) {
	// In track order, so that the output does not depend on map order.
	ls := make([]*lane, 0, len(s.pending))
	for k, l := range s.pending {
		ls = append(ls, l)
		delete(s.pending, k)
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].track < ls[j].track })
	for _, l := range ls {
		c.W.End(l.track, ts, Str("completion", "none: in flight at the end of the capture"))
		s.in.Unmatched++
	}
}

// usbOv is the overview series of one endpoint (keyed as 'usb stats'
// keys them: bus, device, endpoint address, transfer type).
type usbOv struct {
	bytes, transfers, errors *ovSeries
	made                     [3]bool
}

type usbOvKey struct {
	bus  uint16
	dev  uint8
	addr uint8
	typ  usbmon.TransferType
}

// overview counts the event in its endpoint's series, with the rules of
// 'usb stats' (usb.Stats): bytes are the actual lengths of completions
// that moved data, transfers the completions, errors the completions with
// an error (stalls included, cancellations not) plus submission errors.
func (s *usbSource) overview(oi *ovInput, ts uint64) {
	ev := &s.ev
	if ev.Synthesized {
		return
	}
	var bytes, transfers, errs uint64
	switch ev.Type {
	case usbmon.Callback:
		transfers = 1
		if ev.Status >= 0 || ev.Status == -121 || ev.Status == -18 {
			bytes = uint64(ev.Length)
		}
		if usb.IsStall(ev.Status) || ev.Status < 0 && !usb.IsCancel(ev.Status) && ev.Status != -18 {
			errs = 1
		}
	case usbmon.SubmitError:
		errs = 1
	default:
		return
	}
	k := usbOvKey{ev.Bus, ev.Device, ev.EndpointAddress(), ev.Transfer}
	if s.ov == nil {
		s.ov = map[usbOvKey]*usbOv{}
	}
	e := s.ov[k]
	if e == nil {
		e = &usbOv{}
		s.ov[k] = e
	}
	group := func() string {
		dir := "OUT"
		if k.addr&0x80 != 0 {
			dir = "IN"
		}
		return fmt.Sprintf("%d:%03d ep %02x %s %s", k.bus, k.dev, k.addr, dir, k.typ)
	}
	series := func(i int, p **ovSeries, name string, kind ovKind) *ovSeries {
		if !e.made[i] {
			e.made[i] = true
			*p = oi.newSeries(group(), name, kind)
		}
		return *p
	}
	o := oi.ov
	if bytes > 0 {
		o.add(series(0, &e.bytes, "bytes/s", ovBytes), ts, bytes)
	}
	if transfers > 0 {
		o.add(series(1, &e.transfers, "transfers/s", ovPlain), ts, transfers)
	}
	if errs > 0 {
		o.add(series(2, &e.errors, "errors/s", ovPlain), ts, errs)
	}
}
