package report

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// bigMMIOLog is a log of about size bytes: the e1000 PCIDEV and MAP of
// testdata/mmiotrace, then reads and writes of 40 registers with rising
// stamps, a lost-events mark every 20,000 accesses.
func bigMMIOLog(size int) []byte {
	var b bytes.Buffer
	b.WriteString("VERSION 20070824\n" +
		"PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 feb80000 20000 40 0 0 0 0 40000 e1000\n" +
		"MAP 12.222895 1 0xfebc0000 0xff47c24040380000 0x20000 0x0 0\n")
	us := int64(12_300_000)
	for i := 0; b.Len() < size; i++ {
		us += int64(1 + i%7)
		kind := "R"
		if i%5 == 0 {
			kind = "W"
		}
		fmt.Fprintf(&b, "%s 4 %d.%06d 1 0x%x 0x%x 0xffffffff81900000 0\n", kind, us/1e6, us%1e6, 0xfebc0000+4*(i%40), i*2654435761%(1<<32))
		if i%20000 == 19999 {
			fmt.Fprintf(&b, "MARK %d.%06d Lost 3 events.\n", us/1e6, us%1e6)
		}
	}
	return b.Bytes()
}

// TestAnalyzeMMIOMappedMatchesStreamed: the report's second pass maps a
// plain log and drops the pages it has read (mmiotrace.Reader.DropBehind:
// peak RSS flat in the log's size, docs/performance.md); over a 10 MiB
// log (two drops) its counts, series, lost marks and span are those of
// the same log gzip-compressed, which is streamed through a buffer and
// never mapped.
func TestAnalyzeMMIOMappedMatchesStreamed(t *testing.T) {
	data := bigMMIOLog(10 << 20)
	dir := t.TempDir()
	plain := filepath.Join(dir, "big.log")
	if err := os.WriteFile(plain, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	packed := filepath.Join(dir, "big.log.gz")
	if err := os.WriteFile(packed, gz.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ma, sa, err := AnalyzeMMIO(context.Background(), plain, MMIOOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mb, sb, err := AnalyzeMMIO(context.Background(), packed, MMIOOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ma.Regs) != 40 || len(ma.LostMarksNS) == 0 || ma.Stats.Kinds != mb.Stats.Kinds {
		t.Fatalf("mapped: %d registers, %d lost marks, kinds %v (streamed %v)", len(ma.Regs), len(ma.LostMarksNS), ma.Stats.Kinds, mb.Stats.Kinds)
	}
	if !reflect.DeepEqual(ma.BARs, mb.BARs) || !reflect.DeepEqual(ma.Regs, mb.Regs) ||
		!reflect.DeepEqual(ma.LostMarksNS, mb.LostMarksNS) || *sa != *sb || ma.Loss != mb.Loss {
		t.Fatalf("the mapped log's series differ from the streamed log's (span %+v, want %+v)", *sa, *sb)
	}
}
