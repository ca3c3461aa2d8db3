package mapfile

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"unsafe"
)

// ErrTruncated is what a FaultError wraps.
var ErrTruncated = errors.New("truncated while reading")

// FaultError is a read of a mapped file that faulted: the file is
// shorter than when it was mapped (or its page could not be read); or a
// read(2) of a file (Reader, ReaderAt) that ended before the size the
// file had when it was opened, the file being shorter now.
type FaultError struct {
	File   string // the file's name as it was opened
	Offset int64  // the offset in the file of the byte read
}

func (e *FaultError) Error() string {
	return fmt.Sprintf("%s: truncated while reading at offset %d", e.File, e.Offset)
}

func (e *FaultError) Unwrap() error { return ErrTruncated }

// Mapping is a read-only mapping of a file from its first byte.
type Mapping struct {
	Data []byte // the file's bytes; valid until Close
	name string
}

// Name returns the file's name as given to Map.
func (m *Mapping) Name() string { return m.name }

// region is the address range of a mapping and its file.
type region struct {
	start, end uintptr
	name       string
}

// The mappings made and not closed, and the last ones closed since the
// last Map: a goroutine's defers may close a mapping between its fault
// and the Catch that looks the address up. (A closed range may be mapped
// again by anything: a new Map forgets the closed ones.)
var (
	mu     sync.Mutex
	live   []region
	closed [8]region
	nclose int
)

func regionOf(b []byte, name string) region {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return region{p, p + uintptr(len(b)), name}
}

func register(r region) {
	mu.Lock()
	live = append(live, r)
	nclose = 0
	mu.Unlock()
}

func unregister(r region) {
	mu.Lock()
	defer mu.Unlock()
	for i, l := range live {
		if l == r {
			live = append(live[:i], live[i+1:]...)
			break
		}
	}
	closed[nclose%len(closed)] = r
	nclose++
}

// lookup returns the mapping holding addr: a live one, else the one
// closed last.
func lookup(addr uintptr) (region, bool) {
	mu.Lock()
	defer mu.Unlock()
	for _, r := range live {
		if addr >= r.start && addr < r.end {
			return r, true
		}
	}
	for i := 1; i <= min(nclose, len(closed)); i++ {
		if r := closed[(nclose-i)%len(closed)]; addr >= r.start && addr < r.end {
			return r, true
		}
	}
	return region{}, false
}

// Protect makes a fault of the calling goroutine a panic instead of a
// crash, and returns the previous setting for Catch.
func Protect() bool { return debug.SetPanicOnFault(true) }

// Catch, deferred with Protect's result, restores the setting and turns
// the panic of a fault on a Mapping into a *FaultError in *errp. Other
// panics go on.
//
//	defer mapfile.Catch(&err, mapfile.Protect())
func Catch(errp *error, old bool) {
	debug.SetPanicOnFault(old)
	p := recover()
	if p == nil {
		return
	}
	if e := Fault(p); e != nil {
		*errp = e
		return
	}
	panic(p)
}

// Fault returns the *FaultError of the panic value p of a fault on a
// Mapping, nil for any other value.
func Fault(p any) *FaultError {
	a, ok := p.(interface{ Addr() uintptr })
	if !ok {
		return nil
	}
	addr := a.Addr()
	r, ok := lookup(addr)
	if !ok {
		return nil
	}
	return &FaultError{File: r.name, Offset: int64(addr - r.start)}
}

// Do runs fn with its faults on a Mapping caught (Protect, Catch).
func Do(fn func() error) (err error) {
	defer Catch(&err, Protect())
	return fn()
}
