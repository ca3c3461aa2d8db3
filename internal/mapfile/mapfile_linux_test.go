package mapfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/iotap/iotap/internal/mapfile"
	iunix "github.com/iotap/iotap/internal/unix"
)

// mapped writes size bytes to a file and maps it.
func mapped(t *testing.T, size int) (*mapfile.Mapping, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "log")
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i%251) + 1
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := mapfile.Map(f, size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, p
}

var sink int

// sumFrom reads every byte of b from off (a loop the compiler keeps).
func sumFrom(b []byte, off int) (s int) {
	for _, c := range b[off:] {
		s += int(c)
	}
	return s
}

// TestTruncatedWhileMapped: a file cut shorter under its mapping (the
// kernel then raises SIGBUS on a read past the new end) gives a
// *FaultError naming the file and the offset of the first byte read
// past the end, the first byte of the page after the new end; the bytes
// before the cut still read.
func TestTruncatedWhileMapped(t *testing.T) {
	page := os.Getpagesize()
	m, p := mapped(t, 16*page)
	if err := os.Truncate(p, int64(5*page+100)); err != nil {
		t.Fatal(err)
	}
	var sum int
	err := mapfile.Do(func() error {
		sum = sumFrom(m.Data[:5*page], 0)
		return nil
	})
	if err != nil || sum == 0 {
		t.Fatalf("reading before the cut: %v", err)
	}
	err = mapfile.Do(func() error {
		sum = sumFrom(m.Data, 3*page)
		return nil
	})
	var fe *mapfile.FaultError
	if !errors.As(err, &fe) || !errors.Is(err, mapfile.ErrTruncated) {
		t.Fatalf("read past the cut: %v, want a *FaultError", err)
	}
	if fe.File != p || fe.Offset != int64(6*page) {
		t.Errorf("fault at %s offset %d, want %s offset %d", fe.File, fe.Offset, p, 6*page)
	}
	if want := p + ": truncated while reading at offset " + itoa(6*page); err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestFaultAfterClose: the mapping closed by a deferred Close between
// the fault and the Catch (a function's defers run first) is still named.
func TestFaultAfterClose(t *testing.T) {
	page := os.Getpagesize()
	m, p := mapped(t, 4*page)
	os.Truncate(p, 0)
	err := mapfile.Do(func() error {
		defer m.Close()
		sink = sumFrom(m.Data, 0)
		return nil
	})
	var fe *mapfile.FaultError
	if !errors.As(err, &fe) || fe.File != p || fe.Offset != 0 {
		t.Fatalf("got %v, want a fault of %s at offset 0", err, p)
	}
}

// TestOtherFaultPanics: a fault outside every mapping is not turned into
// an error: the panic goes on.
func TestOtherFaultPanics(t *testing.T) {
	mapped(t, 4096) // forgets the mappings closed before: their ranges may be reused
	b, err := iunix.MmapAnon(os.Getpagesize())
	if err != nil {
		t.Fatal(err)
	}
	defer iunix.Munmap(b)
	if err := iunix.ProtectNone(b); err != nil {
		t.Fatal(err)
	}
	defer func() {
		p := recover()
		if a, ok := p.(interface{ Addr() uintptr }); !ok || a.Addr() != uintptr(unsafe.Pointer(&b[0])) {
			t.Fatalf("recovered %v, want the runtime's fault at %p", p, &b[0])
		}
	}()
	mapfile.Do(func() error {
		sink = sumFrom(b, 0)
		return nil
	})
	t.Fatal("no panic")
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
