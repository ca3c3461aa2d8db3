package userevents

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	iunix "github.com/iotap/iotap/internal/unix"
	"github.com/iotap/iotap/tracefs"
)

// Producer registers and writes user events through one open
// user_events_data descriptor. It is safe for concurrent use.
type Producer struct {
	fs   *tracefs.FS
	fd   *iunix.FD
	raw  int
	mu   sync.Mutex
	page []byte    // current page of enable words (outside the Go heap)
	next int       // next unused word in page
	free []*uint32 // words released by Unregister
	evs  map[*Event]struct{}
	done atomic.Bool
	// noPwrite: the kernel refused pwrite(2) on user_events_data (ESPIPE);
	// writes use writev(2).
	noPwrite atomic.Bool
	// ctl runs every register and unregister ioctl on one locked OS
	// thread (see ctlLoop).
	ctl   chan func()
	ctlMu sync.RWMutex
}

// Open finds tracefs and opens user_events_data.
func Open() (*Producer, error) {
	f, err := tracefs.Find()
	if err != nil {
		return nil, &Error{Op: "open", Err: ErrNotSupported, Errno: err}
	}
	return OpenFS(f)
}

// OpenFS opens user_events_data of the tracefs at f.
func OpenFS(f *tracefs.FS) (*Producer, error) {
	fd, err := openData(f)
	if err != nil {
		return nil, err
	}
	p := &Producer{fs: f, fd: fd, raw: fd.Int(), evs: map[*Event]struct{}{}, ctl: make(chan func())}
	go p.ctlLoop()
	return p, nil
}

// ctlLoop serves p.ctl on a locked OS thread.
//
// The kernel keeps a process's registrations in a per-thread
// "user_event_mm" that only threads created after the first registration
// share. A Go program has threads older than that, and goroutines move
// between threads, so an unregister issued from another thread finds
// nothing (ENOENT), the same word could be registered twice, and fork(2)
// from such a thread gives the child no registrations. Issuing every
// ioctl from one thread keeps all the producer's registrations together.
func (p *Producer) ctlLoop() {
	runtime.LockOSThread()
	for fn := range p.ctl {
		fn()
	}
	runtime.UnlockOSThread()
}

// do runs fn on the control thread; false once the producer is closed.
func (p *Producer) do(fn func()) bool {
	p.ctlMu.RLock()
	defer p.ctlMu.RUnlock()
	if p.ctl == nil {
		return false
	}
	done := make(chan struct{})
	p.ctl <- func() { fn(); close(done) }
	<-done
	return true
}

func openData(f *tracefs.FS) (*iunix.FD, error) {
	path, err := f.Path("user_events_data")
	if err != nil {
		return nil, &Error{Op: "open", Err: ErrNotSupported, Errno: err}
	}
	fd, err := iunix.Open(path, iunix.O_RDWR, 0)
	switch {
	case err == nil:
		return fd, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, &Error{Op: "open", Err: ErrNotSupported, Errno: err, Hint: path + " missing: the kernel needs CONFIG_USER_EVENTS (Linux 6.4 or later)"}
	case errors.Is(err, fs.ErrPermission):
		return nil, &Error{Op: "open", Err: ErrPermission, Errno: err, Hint: "run as root or give write access to " + path}
	}
	return nil, &Error{Op: "open", Err: ErrInvalid, Errno: err}
}

// FS returns the tracefs the producer uses.
func (p *Producer) FS() *tracefs.FS { return p.fs }

// Register registers the event described by a command such as
// "req u32 id; __rel_loc char[] path", without flags.
func (p *Producer) Register(cmd string) (*Event, error) {
	s, err := ParseCommand(cmd)
	if err != nil {
		return nil, err
	}
	return p.RegisterSchema(s, 0)
}

// RegisterSchema registers s with flags. Flags the kernel does not know
// (EINVAL from an older kernel) are dropped and the registration retried;
// Event.Flags tells what was granted.
func (p *Producer) RegisterSchema(s *Schema, flags Flags) (*Event, error) {
	if p.done.Load() {
		return nil, &Error{Op: "register", Event: s.Name, Err: ErrClosed}
	}
	cmd := s.Command()
	if _, err := ParseCommand(cmd); err != nil { // schemas built by hand
		return nil, err
	}
	word, err := p.allocWord()
	if err != nil {
		return nil, err
	}
	name := append([]byte(cmd), 0)
	reg := iunix.UserReg{
		Size:       iunix.SizeofUserReg,
		EnableBit:  0,
		EnableSize: 4,
		Flags:      uint16(flags),
		EnableAddr: uint64(uintptr(unsafe.Pointer(word))),
		NameArgs:   uint64(uintptr(unsafe.Pointer(&name[0]))),
	}
	ok := p.do(func() {
		err = iunix.UserEventsRegister(p.raw, &reg, name)
		for err != nil && errors.Is(err, syscall.EINVAL) && reg.Flags != 0 {
			// Older kernel: drop the newest flag first and retry.
			if reg.Flags&uint16(MultiFormat) != 0 {
				reg.Flags &^= uint16(MultiFormat)
			} else {
				reg.Flags = 0
			}
			err = iunix.UserEventsRegister(p.raw, &reg, name)
		}
	})
	if !ok {
		p.releaseWord(word)
		return nil, &Error{Op: "register", Event: s.Name, Err: ErrClosed}
	}
	if err != nil {
		p.releaseWord(word)
		return nil, kernelError("register", s.Name, err)
	}
	e := newEvent(p, s, reg.WriteIndex, Flags(reg.Flags), word)
	p.mu.Lock()
	p.evs[e] = struct{}{}
	p.mu.Unlock()
	return e, nil
}

// allocWord returns a 4-byte enable word in anonymous mmap'd memory.
//
// The kernel keeps the address given at registration and writes the
// enable bit there asynchronously, whenever a tracer attaches or detaches,
// for as long as the registration lives. The word must therefore never
// move and never be reused by anything else: Go does not promise that
// heap objects stay put (stacks do move), and a freed heap object would be
// reused while the kernel still writes into it. Memory from mmap is never
// touched by the garbage collector.
func (p *Producer) allocWord() (*uint32, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		w := p.free[n-1]
		p.free = p.free[:n-1]
		return w, nil
	}
	if p.page == nil || p.next+4 > len(p.page) {
		pg, err := iunix.MmapAnon(4096)
		if err != nil {
			return nil, &Error{Op: "register", Err: ErrInvalid, Errno: err}
		}
		p.page, p.next = pg, 0 // old pages stay mapped: their words are in use
	}
	w := (*uint32)(unsafe.Pointer(&p.page[p.next]))
	p.next += 4
	return w, nil
}

func (p *Producer) releaseWord(w *uint32) {
	p.mu.Lock()
	p.free = append(p.free, w)
	p.mu.Unlock()
}

// Delete deletes the event called name from the system. It works only
// once nothing references the event: no process has it registered (this
// producer included: unregister and Close first, since the kernel holds a
// reference per descriptor until it is closed) and no tracer has it
// enabled. It uses a descriptor of its own, as the kernel documentation
// advises.
func (p *Producer) Delete(name string) error {
	return DeleteFS(p.fs, name)
}

// DeleteFS deletes the event called name through the tracefs at f.
func DeleteFS(f *tracefs.FS, name string) error {
	if !ValidName(name) {
		return &Error{Op: "delete", Event: name, Err: ErrInvalidCommand, Hint: "bad event name"}
	}
	fd, err := openData(f)
	if err != nil {
		return err
	}
	defer fd.Close()
	if err := iunix.UserEventsDelete(fd.Int(), append([]byte(name), 0)); err != nil {
		return kernelError("delete", name, err)
	}
	return nil
}

// Close unregisters every event of the producer and closes the
// descriptor. Events of a closed producer report Enabled false and fail
// Write with ErrClosed. The pages of enable words stay mapped (4 KiB per
// 1024 registrations) so that a late Enabled never faults.
func (p *Producer) Close() error {
	if p.done.Swap(true) {
		return nil
	}
	p.mu.Lock()
	evs := make([]*Event, 0, len(p.evs))
	for e := range p.evs {
		evs = append(evs, e)
	}
	p.mu.Unlock()
	var first error
	for _, e := range evs {
		if err := e.unregister(); err != nil && first == nil {
			first = err
		}
	}
	p.ctlMu.Lock()
	close(p.ctl)
	p.ctl = nil
	p.ctlMu.Unlock()
	if err := p.fd.Close(); err != nil && first == nil {
		first = err
	}
	return first
}

// Event is a registered user event.
type Event struct {
	p      *Producer
	schema *Schema
	slot   *uint32 // the enable word; zeroed and never reused after unregister
	idx    uint32
	flags  Flags
	small  bool       // fixed-size payload that fits smallPayload
	ints   []intField // all fields integers (and small): Write's fast path
	pool   sync.Pool  // *writeBuf
	mu     sync.Mutex
	gone   bool
}

func newEvent(p *Producer, s *Schema, idx uint32, flags Flags, slot *uint32) *Event {
	e := &Event{p: p, schema: s, idx: idx, flags: flags, slot: slot,
		small: !s.HasDynamic() && s.FixedSize <= smallPayload, ints: intFields(s)}
	e.pool.New = func() any { return new(writeBuf) }
	return e
}

// writeBuf is the scratch payload of events with dynamic fields.
type writeBuf struct {
	data [4096]byte
}

// Enabled reports whether a tracer (ftrace, perf, eBPF) has the event
// enabled. It is one atomic load of the enable word the kernel updates.
func (e *Event) Enabled() bool { return atomic.LoadUint32(e.slot) != 0 }

// Schema returns the event's fields.
func (e *Event) Schema() *Schema { return e.schema }

// Name returns the event's name.
func (e *Event) Name() string { return e.schema.Name }

// Flags returns the flags the kernel accepted.
func (e *Event) Flags() Flags { return e.flags }

// WriteIndex returns the kernel's write index of the event on the
// producer's descriptor.
func (e *Event) WriteIndex() uint32 { return e.idx }

// Write encodes one value per field (see Schema.AppendPayload) and writes
// the event with a single system call, write_index first: pwrite(2) of one
// stack buffer when every field is an integer (see the fast path notes
// above pwriteFailed), else writev(2) of the index and the payload. It
// does not allocate. When nothing records the event the kernel refuses
// the write with ErrNotEnabled: check Enabled first to skip the work.
func (e *Event) Write(args ...any) error {
	if e.p.done.Load() {
		return &Error{Op: "write", Event: e.schema.Name, Err: ErrClosed}
	}
	if e.ints != nil && len(args) == len(e.ints) {
		// Integer fields only: encode on the stack without calls.
		var buf [4 + smallPayload]byte // write_index, then the payload
		for i, f := range e.ints {
			var x uint64
			var neg bool
			switch n := args[i].(type) {
			case uint32:
				x = uint64(n)
			case uint64:
				x = n
			case int:
				x, neg = uint64(n), n < 0
			case int64:
				x, neg = uint64(n), n < 0
			case int32:
				x, neg = uint64(n), n < 0
			case uint16:
				x = uint64(n)
			case uint8:
				x = uint64(n)
			default:
				var ok bool
				if x, neg, ok = toInt(n); !ok {
					return e.writeSlow(args)
				}
			}
			if !fits(x, neg, int(f.size), f.signed) {
				return e.writeSlow(args) // reports the field and value
			}
			switch f.size {
			case 4:
				binary.LittleEndian.PutUint32(buf[4+int(f.off):], uint32(x))
			case 8:
				binary.LittleEndian.PutUint64(buf[4+int(f.off):], x)
			case 2:
				binary.LittleEndian.PutUint16(buf[4+int(f.off):], uint16(x))
			default:
				buf[4+int(f.off)] = byte(x)
			}
		}
		// One pwrite of index and payload (see the notes above pwriteFailed).
		binary.NativeEndian.PutUint32(buf[:4], e.idx)
		if e.p.noPwrite.Load() {
			return e.pwriteFailed(&buf, e.schema.FixedSize, 0)
		}
		if errno := iunix.Pwrite(e.p.raw, unsafe.Pointer(&buf), 4+e.schema.FixedSize); errno != 0 {
			return e.pwriteFailed(&buf, e.schema.FixedSize, errno)
		}
		return nil
	}
	return e.writeSlow(args)
}

// writeSlow is Write for every schema, through Schema.AppendPayload.
func (e *Event) writeSlow(args []any) error {
	if e.small {
		// Fixed-size events of up to smallPayload bytes: encode on the stack.
		var buf [smallPayload]byte
		payload, err := e.schema.AppendPayload(buf[:0], args...)
		if err != nil {
			return err
		}
		return e.writeBytes(payload)
	}
	b := e.pool.Get().(*writeBuf)
	payload, err := e.schema.AppendPayload(b.data[:0], args...)
	if err == nil {
		err = e.writeBytes(payload)
	}
	e.pool.Put(b)
	return err
}

// intField is an integer field of an event whose fields are all
// integers, for Write's fast path.
type intField struct {
	off    uint8 // < smallPayload
	size   uint8
	signed bool
}

// intFields returns s's fields when they are all integers of a payload
// of at most smallPayload bytes, else nil.
func intFields(s *Schema) []intField {
	if s.HasDynamic() || s.FixedSize > smallPayload || len(s.Fields) == 0 {
		return nil
	}
	out := make([]intField, len(s.Fields))
	for i, f := range s.Fields {
		if (f.Kind != KindInt && f.Kind != KindUint) || (f.Size != 1 && f.Size != 2 && f.Size != 4 && f.Size != 8) {
			return nil
		}
		out[i] = intField{off: uint8(f.Offset), size: uint8(f.Size), signed: f.Kind == KindInt}
	}
	return out
}

// WriteRaw writes a payload encoded by the caller (without write_index).
// It is checked with Schema.ValidatePayload first.
func (e *Event) WriteRaw(payload []byte) error {
	if e.p.done.Load() {
		return &Error{Op: "write", Event: e.schema.Name, Err: ErrClosed}
	}
	if err := e.schema.ValidatePayload(payload); err != nil {
		return err
	}
	return e.writeBytes(payload)
}

// writev writes write_index and payload. Both iovecs and the index live on
// the stack: the raw system call cannot move it.
func (e *Event) writev(payload unsafe.Pointer, size int) error {
	idx := e.idx
	iov := iunix.IovecPair{{Base: unsafe.Pointer(&idx), Len: 4}, {Base: payload, Len: uintptr(size)}}
	n := 2
	if size == 0 {
		n = 1
	}
	if errno := iunix.WritevPair(e.p.raw, &iov, n); errno != 0 {
		return e.writeError(errno)
	}
	return nil
}

// The integer and fixed-struct fast paths of Write and Typed.Write put
// write_index and the payload in one stack buffer and write it with one
// pwrite(2) at offset 0. user_events_data ignores positions, and unlike
// writev(2) a pwrite(2) of one buffer needs no iovec import and skips the
// file's f_pos mutex, which the kernel takes on every write or writev of a
// multi-threaded process (every Go program): measured in the lab, it
// costs about a third less than writev from the same process
// (docs/performance.md). A kernel that refuses positioned writes on the
// file (ESPIPE) gets the same bytes through writev from then on.

// pwriteFailed handles a failed pwrite (errno) or, with errno 0, writes
// buf with writev.
//
//go:noinline
func (e *Event) pwriteFailed(buf *[4 + smallPayload]byte, size int, errno iunix.Errno) error {
	if errno == syscall.ESPIPE {
		e.p.noPwrite.Store(true)
	} else if errno != 0 {
		return e.writeError(errno)
	}
	iov := iunix.IovecPair{{Base: unsafe.Pointer(buf), Len: uintptr(4 + size)}}
	if errno := iunix.WritevPair(e.p.raw, &iov, 1); errno != 0 {
		return e.writeError(errno)
	}
	return nil
}

// writeBytes writes write_index and payload.
func (e *Event) writeBytes(payload []byte) error {
	return e.writev(unsafe.Pointer(unsafe.SliceData(payload)), len(payload))
}

// writeError maps a failed write's errno; kept out of line so that the
// write path stays small.
//
//go:noinline
func (e *Event) writeError(errno iunix.Errno) error {
	return kernelError("write", e.schema.Name, errno)
}

// Unregister tells the kernel to stop updating the enable word
// (DIAG_IOCSUNREG). The event itself lives on while the producer's
// descriptor is open or other processes use it; see Producer.Delete.
func (e *Event) Unregister() error {
	err := e.unregister()
	if err == nil {
		e.p.mu.Lock()
		delete(e.p.evs, e)
		e.p.mu.Unlock()
	}
	return err
}

func (e *Event) unregister() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone {
		return nil
	}
	u := iunix.UserUnreg{Size: iunix.SizeofUserUnreg, DisableBit: 0, DisableAddr: uint64(uintptr(unsafe.Pointer(e.slot)))}
	var err error
	if !e.p.do(func() { err = iunix.UserEventsUnregister(e.p.raw, &u) }) {
		return &Error{Op: "unregister", Event: e.schema.Name, Err: ErrClosed}
	}
	if err != nil {
		return kernelError("unregister", e.schema.Name, err)
	}
	e.gone = true
	// The kernel no longer writes the word; it stays zero and is not
	// reused, so a late Enabled reads false.
	atomic.StoreUint32(e.slot, 0)
	return nil
}

// String describes the event.
func (e *Event) String() string {
	return fmt.Sprintf("%s (write index %d, flags %#x)", e.schema.Command(), e.idx, uint16(e.flags))
}
