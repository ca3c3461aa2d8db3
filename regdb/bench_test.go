package regdb

import "testing"

// accesses is a mix of e1000 BAR0 accesses like a driver's probe and
// interrupt path: offsets and values.
var benchAccesses = []struct {
	off uint64
	val uint64
}{
	{0x0008, 0x80080783}, {0x00d8, 0xffffffff}, {0x0000, 0x00140240}, {0x00c0, 0x00000083},
	{0x0020, 0x18227949}, {0x5404, 0x80005634}, {0x5200, 0}, {0x4000, 3}, {0x3818, 17},
	{0x0100, 0x0400801a}, {0x0010, 0x000001cf}, {0x2818, 255}, {0x5600, 0}, {0x0e00, 0x07068302},
}

// BenchmarkLookupDecode names and decodes one access: Lookup plus
// AppendFormat into a reused buffer.
func BenchmarkLookupDecode(b *testing.B) {
	db, d := loadE1000(b)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := benchAccesses[i%len(benchAccesses)]
		m, ok := db.LookupIn(d, a.off, 32)
		if !ok {
			b.Fatal("not found")
		}
		buf = m.AppendFormat(buf[:0], a.val)
	}
}

// BenchmarkLookup is the lookup alone.
func BenchmarkLookup(b *testing.B) {
	db, d := loadE1000(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := benchAccesses[i%len(benchAccesses)]
		if _, ok := db.LookupIn(d, a.off, 32); !ok {
			b.Fatal("not found")
		}
	}
}

func TestLookupFormatDoNotAllocate(t *testing.T) {
	db, d := loadE1000(t)
	buf := make([]byte, 0, 1024)
	n := testing.AllocsPerRun(100, func() {
		for _, a := range benchAccesses {
			m, _ := db.LookupIn(d, a.off, 32)
			buf = m.AppendFormat(buf[:0], a.val)
			m, _ = db.Lookup("E1000", a.off+1, 8)
			buf = m.AppendFormat(buf[:0], a.val&0xff)
		}
	})
	if n != 0 {
		t.Errorf("Lookup+AppendFormat allocate %v times per run, want 0", n)
	}
}
