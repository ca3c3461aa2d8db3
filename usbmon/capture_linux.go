//go:build linux

package usbmon

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/iotap/iotap/internal/unix"
)

// Capture is a live usbmon capture. It is a Reader: ReadInto blocks until
// an event arrives and returns io.EOF once the context is cancelled and the
// events already queued in the kernel have been delivered.
//
// With MethodMmap, ev.Data points into the kernel ring mapped read-only
// and stays valid until the next ReadInto (the ring space is released to
// the kernel only when a whole batch has been consumed).
type Capture struct {
	ctx  context.Context
	opt  CaptureOptions
	fd   *unix.FD
	path string

	ring    []byte   // mmap
	vec     []uint32 // mmap offsets of the current batch
	n, i    int      // batch size and position
	pending uint32   // events to flush on the next MFETCH

	hdr  [64]byte // GETX
	data []byte   // GETX data buffer
	iso  []ISODesc

	rec      []byte // binary record of the last event
	line     []byte // text
	lostPath string
	lost0    uint64

	fetchedAt time.Time // when the last MFETCH returned events (zero when idle)

	q   *queue // CaptureOptions.Queue
	cur []byte // queued records being handed out
	pos int

	mu         sync.Mutex // guards stats, statsFinal and lastStats while a queue drains the ring
	stats      CaptureStats
	statsFinal bool // the queue has read the drop counter at the stop
	lastStats  time.Time
	sinceIdle  int
	stopping   bool
	drainLeft  int // events still to deliver once stopping
	closed     bool
}

// OpenCapture starts a live capture. Errors wrap ErrNotSupported with the
// remedy when usbmon is missing.
func OpenCapture(ctx context.Context, opt CaptureOptions) (*Capture, error) {
	if opt.Bus < 0 || opt.Bus > 255 {
		return nil, fmt.Errorf("usbmon: bus %d out of range (0 = all buses)", opt.Bus)
	}
	if opt.RingSize != 0 && opt.Method == MethodText {
		return nil, fmt.Errorf("usbmon: the text API has no ring size (use --method mmap or read)")
	}
	c := &Capture{ctx: ctx, opt: opt, iso: make([]ISODesc, 0, maxISODesc), lastStats: time.Now()}
	var err error
	if opt.Method == MethodText {
		err = c.openText()
	} else {
		err = c.openBinary()
	}
	if err == nil && opt.Queue > 0 {
		if opt.Method != MethodMmap {
			err = fmt.Errorf("usbmon: a capture queue needs the mmap method")
		} else {
			err = c.startQueue()
		}
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Capture) openBinary() error {
	dir := c.opt.DevDir
	if dir == "" {
		dir = "/dev"
	}
	c.path = filepath.Join(dir, "usbmon"+strconv.Itoa(c.opt.Bus))
	fd, err := unix.Open(c.path, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return openError(c.path, filepath.Join(dir, "usbmon0"), c.opt.Bus, err)
	}
	c.fd = fd
	if c.opt.RingSize != 0 {
		if err := unix.UsbmonSetRingSize(fd.Int(), c.opt.RingSize); err != nil {
			if errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("usbmon: ring size %d refused by the kernel: it must be between %d (%d KiB) and %d (%d KiB) bytes: %w",
					c.opt.RingSize, RingSizeMin, RingSizeMin/1024, RingSizeMax, RingSizeMax/1024, err)
			}
			return fmt.Errorf("usbmon: set ring size: %w", err)
		}
	}
	size, err := unix.UsbmonRingSize(fd.Int())
	if err != nil {
		return fmt.Errorf("usbmon: ring size: %w", err)
	}
	c.stats.RingSize = size
	if c.opt.Method == MethodMmap {
		c.ring, err = unix.Mmap(fd.Int(), 0, size, unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return fmt.Errorf("usbmon: map the ring of %s: %w", c.path, err)
		}
		c.vec = make([]uint32, 1024)
	} else {
		c.data = make([]byte, size)
	}
	// Start the drop counter from zero: the kernel resets it on each query.
	_, err = unix.UsbmonGetStats(fd.Int())
	return err
}

func openError(path, path0 string, bus int, err error) error {
	switch {
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENODEV):
		if _, e := os.Stat(path0); e != nil {
			return fmt.Errorf("usbmon: %s missing: load the usbmon module (modprobe usbmon) or build the kernel with CONFIG_USB_MON: %w", path0, ErrNotSupported)
		}
		return fmt.Errorf("usbmon: bus %d does not exist (%s): %w", bus, path, err)
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
		return fmt.Errorf("usbmon: %s: permission denied: usbmon needs root (it sees keystrokes): %w", path, err)
	}
	return fmt.Errorf("usbmon: %w", err)
}

func (c *Capture) openText() error {
	root := c.opt.DebugFS
	if root == "" {
		root = findDebugFS()
	}
	dir := filepath.Join(root, "usb", "usbmon")
	c.path = filepath.Join(dir, strconv.Itoa(c.opt.Bus)+"u")
	fd, err := unix.Open(c.path, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		if _, e := os.Stat(filepath.Join(root, "usb")); e != nil {
			return fmt.Errorf("usbmon: %s missing: mount debugfs (mount -t debugfs none /sys/kernel/debug) and load usbmon (modprobe usbmon, CONFIG_USB_MON): %w", dir, ErrNotSupported)
		}
		return openError(c.path, filepath.Join(dir, "0u"), c.opt.Bus, err)
	}
	c.fd = fd
	c.line = make([]byte, 4096)
	c.data = make([]byte, 0, maxTextData)
	c.lostPath = filepath.Join(dir, strconv.Itoa(c.opt.Bus)+"s")
	c.lost0, _ = readTextLost(c.lostPath)
	return nil
}

// findDebugFS returns the debugfs mount point from /proc/self/mountinfo.
func findDebugFS() string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err == nil {
		if p := debugfsFromMountinfo(b); p != "" {
			return p
		}
	}
	return "/sys/kernel/debug"
}

// readTextLost reads "text_lost N" from the usbmon/Ns statistics file.
func readTextLost(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parseTextLost(b)
}

// Format is FormatBinary, or Format1u for MethodText.
func (c *Capture) Format() Format {
	if c.opt.Method == MethodText {
		return Format1u
	}
	return FormatBinary
}

// Path is the kernel file being read.
func (c *Capture) Path() string { return c.path }

// Read returns the next event in new memory.
func (c *Capture) Read() (*Event, error) {
	var ev Event
	if err := c.ReadInto(&ev); err != nil {
		return nil, err
	}
	return ev.Clone(), nil
}

// ReadInto fills ev with the next event.
func (c *Capture) ReadInto(ev *Event) error {
	if c.closed {
		return io.EOF
	}
	switch {
	case c.q != nil:
		return c.readQueued(ev)
	case c.opt.Method == MethodMmap:
		return c.readMmap(ev)
	case c.opt.Method == MethodRead:
		return c.readGetX(ev)
	}
	return c.readText(ev)
}

// wait is called when no event is queued: it signals the batch end, then
// waits a little; it reports false once the capture must end.
func (c *Capture) wait(poll bool) bool {
	if c.opt.OnBatch != nil {
		c.opt.OnBatch()
	}
	c.sinceIdle = 0
	if c.stopping {
		return false
	}
	if c.ctx.Err() != nil {
		c.beginStop()
		return true
	}
	c.maybeStats()
	if poll && c.fd != nil {
		unix.UsbmonPollIn(c.fd.Int(), 100*time.Millisecond)
	} else {
		select {
		case <-c.ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
	return true
}

// beginStop is called once the context is done: what the kernel has
// queued at that moment is still delivered (without waiting), then
// ReadInto returns io.EOF, even if traffic goes on.
func (c *Capture) beginStop() {
	if c.stopping {
		return
	}
	c.stopping = true
	c.queryStats()
	switch c.opt.Method {
	case MethodText:
		c.drainLeft = 1 << 12 // the text API queues far fewer (EVENT_MAX)
	default:
		// Queued counts the events of the current batch not yet flushed.
		c.drainLeft = int(c.stats.Queued) - int(c.pending) - (c.n - c.i)
	}
}

// stopNow reports whether the capture must end before taking another
// event from the kernel.
func (c *Capture) stopNow() bool {
	if !c.stopping && c.ctx.Err() != nil {
		c.beginStop()
	}
	return c.stopping && c.drainLeft <= 0
}

// batchDone is called after each event delivered by the one-at-a-time
// methods: it signals a batch every 256 events under sustained load.
func (c *Capture) batchDone() {
	c.sinceIdle++
	if c.sinceIdle >= 256 {
		c.sinceIdle = 0
		if c.opt.OnBatch != nil {
			c.opt.OnBatch()
		}
		c.maybeStats()
	}
}

func (c *Capture) maybeStats() {
	c.mu.Lock()
	due := time.Since(c.lastStats) >= time.Second
	c.mu.Unlock()
	if due {
		c.queryStats()
	}
}

func (c *Capture) queryStats() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastStats = time.Now()
	if c.statsFinal {
		return
	}
	if c.fd == nil {
		return
	}
	if c.opt.Method == MethodText {
		if n, err := readTextLost(c.lostPath); err == nil && n >= c.lost0 {
			c.stats.Dropped = n - c.lost0
		}
		return
	}
	if s, err := unix.UsbmonGetStats(c.fd.Int()); err == nil {
		c.stats.Dropped += uint64(s.Dropped)
		c.stats.Queued = s.Queued
	}
}

var native = binary.NativeEndian

func (c *Capture) readMmap(ev *Event) error {
	for {
		for c.i < c.n {
			off := int(c.vec[c.i])
			c.i++
			if off < 0 || off+HeaderLen64 > len(c.ring) {
				return fmt.Errorf("usbmon: ring offset %d outside the %d-byte ring: %w", off, len(c.ring), ErrFormat)
			}
			h := c.ring[off : off+HeaderLen64]
			capLen := int(native.Uint32(h[36:]))
			if EventType(h[8]) == Filler {
				c.stats.Fillers++
				continue
			}
			end := off + HeaderLen64 + capLen
			if end > len(c.ring) {
				return fmt.Errorf("usbmon: record at ring offset %d (%d bytes) crosses the ring end: %w", off, capLen, ErrFormat)
			}
			c.rec = c.ring[off:end]
			if err := DecodePacket(c.rec, HeaderLen64, native, ev, c.iso); err != nil {
				return err
			}
			if cap(ev.ISO) > cap(c.iso) {
				c.iso = ev.ISO[:0]
			}
			ev.Format = FormatBinary
			c.stats.Events++
			return nil
		}
		if c.n > 0 && c.opt.OnBatch != nil {
			c.opt.OnBatch()
		}
		c.pending += uint32(c.n)
		c.n, c.i = 0, 0
		if c.stopNow() {
			return io.EOF
		}
		if !c.fetchedAt.IsZero() {
			c.stats.MaxStall = max(c.stats.MaxStall, time.Since(c.fetchedAt))
		}
		fetched, flushed, err := unix.UsbmonMfetch(c.fd.Int(), c.vec, c.pending)
		c.stats.Flushed += uint64(flushed)
		if flushed <= c.pending {
			c.pending -= flushed
		} else {
			c.pending = 0
		}
		if err == nil && fetched > 0 {
			c.n = int(fetched)
			c.stats.Batches++
			c.fetchedAt = time.Now()
			c.notePeaks(c.vec[:c.n], c.pending)
			if c.stopping {
				c.n = min(c.n, c.drainLeft)
				c.drainLeft -= c.n
			} else {
				c.maybeStats()
			}
			continue
		}
		if err != nil && !errors.Is(err, unix.EAGAIN) {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return fmt.Errorf("usbmon: MON_IOCX_MFETCH: %w", err)
		}
		c.fetchedAt = time.Time{}
		if !c.wait(true) {
			return io.EOF
		}
	}
}

func (c *Capture) readGetX(ev *Event) error {
	for {
		if c.stopNow() {
			return io.EOF
		}
		err := unix.UsbmonGetX(c.fd.Int(), &c.hdr, c.data)
		if err == nil {
			capLen := int(native.Uint32(c.hdr[36:]))
			if capLen > len(c.data) {
				capLen = len(c.data)
			}
			// Put header and data together for the one decoder.
			rec := c.buf(HeaderLen64 + capLen)
			copy(rec, c.hdr[:])
			copy(rec[HeaderLen64:], c.data[:capLen])
			c.rec = rec
			if err := DecodePacket(rec, HeaderLen64, native, ev, c.iso); err != nil {
				return err
			}
			if cap(ev.ISO) > cap(c.iso) {
				c.iso = ev.ISO[:0]
			}
			ev.Format = FormatBinary
			c.stats.Events++
			c.drainLeft--
			c.batchDone()
			return nil
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if !errors.Is(err, unix.EAGAIN) {
			return fmt.Errorf("usbmon: MON_IOCX_GETX: %w", err)
		}
		if !c.wait(true) {
			return io.EOF
		}
	}
}

// buf returns a scratch record buffer of n bytes (GETX).
func (c *Capture) buf(n int) []byte {
	if cap(c.line) < n {
		c.line = make([]byte, n)
	}
	return c.line[:n]
}

func (c *Capture) readText(ev *Event) error {
	for {
		if c.stopNow() {
			return io.EOF
		}
		n, err := unix.Read(c.fd.Int(), c.line[:cap(c.line)])
		if err == nil && n > 0 {
			line := trimEOL(c.line[:n])
			ev.reset()
			ev.Data = c.data[:0]
			ev.ISO = c.iso[:0]
			if msg := parseTextLine(line, Format1u, ev); msg != "" {
				return &FormatError{Format: Format1u, Line: int(c.stats.Events) + 1, Offset: -1, Msg: msg + ": " + strconv.Quote(string(line)), Err: ErrFormat}
			}
			c.data = ev.Data[:0]
			if c.opt.TextWallClock {
				if mono, err := unix.ClockNS(unix.ClockMonotonic); err == nil {
					wall := textWallClock(ev.TextStamp, mono, time.Now().UnixNano())
					ev.Sec, ev.Usec = wall/1e6, int32(wall%1e6)
					ev.Fields |= HasWallClock
				}
			}
			c.stats.Events++
			c.drainLeft--
			c.batchDone()
			return nil
		}
		if err != nil && errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil && !errors.Is(err, unix.EAGAIN) {
			return fmt.Errorf("usbmon: read %s: %w", c.path, err)
		}
		if !c.wait(false) {
			return io.EOF
		}
	}
}

// Record returns the binary record (64-byte header, ISO descriptors,
// data) of the event the last ReadInto returned, as the kernel delivered
// it, valid as long as that event's Data. It returns nil for the text
// method and on big-endian hosts. Writers' WriteRecord take it.
func (c *Capture) Record() []byte {
	if c.opt.Method == MethodText || native.Uint16([]byte{1, 0}) != 1 {
		return nil
	}
	return c.rec
}

// Stats queries the kernel's drop counter now and returns the counters.
func (c *Capture) Stats() CaptureStats {
	if !c.closed {
		c.queryStats()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Close ends the capture after a last statistics query; Stats stays valid.
func (c *Capture) Close() error {
	if c.closed {
		return nil
	}
	if c.q != nil {
		c.q.stopAndWait()
	}
	c.queryStats()
	c.closed = true
	var err error
	if c.ring != nil {
		err = unix.Munmap(c.ring)
		c.ring = nil
	}
	if c.fd != nil {
		if e := c.fd.Close(); err == nil {
			err = e
		}
	}
	return err
}
