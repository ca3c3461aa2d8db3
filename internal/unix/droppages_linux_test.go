package unix

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestDropPagesKeepsMapping checks what mmiotrace's drop-behind relies
// on: after DropPages of a part of a file mapping, that part still reads
// the file's bytes (the range is not a hole that other memory could be
// mapped into and the final Munmap would then destroy), and the mapping's
// resident pages, as the kernel counts them in /proc/self/smaps, fall.
func TestDropPagesKeepsMapping(t *testing.T) {
	const page, pages = 4096, 64
	want := make([]byte, page*pages)
	for i := range want {
		want[i] = byte(i*7 + i/page)
	}
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := MmapFile(f.Fd(), len(want))
	if err != nil {
		t.Fatal(err)
	}
	defer Munmap(b)
	if !bytes.Equal(b, want) { // faults every page in
		t.Fatal("mapping differs from the file")
	}
	before := mappingRss(t, b)
	if err := DropPages(b[page : page*(pages-1)]); err != nil {
		t.Fatal(err)
	}
	after := mappingRss(t, b)
	if after >= before || after > 8*page/1024 {
		t.Errorf("Rss of the mapping %d kB -> %d kB after dropping %d of its %d pages", before, after, pages-2, pages)
	}
	// Read again: the dropped range must still be the file's bytes (an
	// unmapped range faults here).
	if !bytes.Equal(b, want) {
		t.Fatal("mapping differs from the file after DropPages")
	}
}

// mappingRss is the Rss, in kB, of the mapping that starts at b's first
// byte, from /proc/self/smaps.
func mappingRss(t *testing.T, b []byte) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, start) {
			in = true
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			kb, err := strconv.Atoi(strings.Fields(line)[1])
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatalf("mapping %s not in /proc/self/smaps", start)
	return 0
}
