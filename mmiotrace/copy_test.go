package mmiotrace

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCopyRecordsAgainstGawk: CopyRecords with a kind filter and a count
// writes exactly the lines gawk selects from the lab log (the first N
// reads of 4 bytes), and with neither what ConvertLog writes.
func TestCopyRecordsAgainstGawk(t *testing.T) {
	gawk, err := exec.LookPath("gawk")
	if err != nil {
		t.Skip("gawk (the oracle) not installed")
	}
	const log = "testdata/e1000-bind.log"
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, count := range []uint64{0, 1, 500} {
		prog := `$1 == "R" && $2 == 4 { print }`
		if count > 0 {
			prog = fmt.Sprintf(`$1 == "R" && $2 == 4 { print; if (++n == %d) exit }`, count)
		}
		want, err := exec.Command(gawk, prog, log).Output()
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		keep := func(r *Record) bool { return r.Kind == KindRead && r.Width == 4 }
		n, err := CopyRecords(context.Background(), NewReader(bytes.NewReader(data)), &got, AppendText, CopyOptions{Keep: keep, Count: count})
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != string(want) || n != uint64(bytes.Count(want, []byte("\n"))) {
			t.Errorf("count %d: %d records, %d bytes; gawk %d bytes", count, n, got.Len(), len(want))
		}
	}

	var all, conv bytes.Buffer
	if _, err := CopyRecords(context.Background(), NewReader(bytes.NewReader(data)), &all, AppendText, CopyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ConvertLog(context.Background(), bytes.NewReader(data), &conv, AppendText, ConvertOptions{Workers: 2, ChunkSize: 4096}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(all.Bytes(), conv.Bytes()) || all.Len() == 0 {
		t.Errorf("CopyRecords wrote %d bytes, ConvertLog %d", all.Len(), conv.Len())
	}

	// Cancelled: nothing read, the context's error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var none bytes.Buffer
	if n, err := CopyRecords(ctx, NewReader(bytes.NewReader(data)), &none, AppendText, CopyOptions{}); err != context.Canceled || n != 0 || none.Len() != 0 {
		t.Errorf("cancelled: %d records, %d bytes, %v", n, none.Len(), err)
	}

	// A bad line without keep-going: the records before it, then the error.
	bad := "VERSION 20070824\nR 4 1.0 1 0x10 0x1 0x0 0\nR 4 bad\nR 4 2.0 1 0x10 0x2 0x0 0\n"
	var part bytes.Buffer
	n, err := CopyRecords(context.Background(), NewReader(strings.NewReader(bad)), &part, AppendText, CopyOptions{})
	if err == nil || n != 2 || part.String() != "VERSION 20070824\nR 4 1.0 1 0x10 0x1 0x0 0\n" {
		t.Errorf("bad line: %d records, %q, %v", n, part.String(), err)
	}
}
