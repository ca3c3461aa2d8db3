package usbmon

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogSkipped: converting a text capture with 12 bad lines
// (--keep-going) says the first SkipLogLines of them, each with its line
// number as the reader gives it, and counts all 12.
func TestLogSkipped(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "testdata", "usbmon", "lab-0u.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(text), "\n")
	var in strings.Builder
	in.WriteString(lines[0])
	for i := range 12 {
		fmt.Fprintf(&in, "not a usbmon line %d\n", i)
	}
	in.WriteString(strings.Join(lines[1:], ""))
	var log strings.Builder
	res, err := Convert(context.Background(), strings.NewReader(in.String()), io.Discard, ConvertOptions{Format: Format1u, KeepGoing: true, OnSkip: LogSkipped(&log, "iotap: skipped: ")})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	if len(got) != SkipLogLines || res.Skipped != 12 {
		t.Fatalf("%d lines said, %d skipped; want %d said, 12 skipped:\n%s", len(got), res.Skipped, SkipLogLines, log.String())
	}
	for i, l := range got {
		if !strings.HasPrefix(l, "iotap: skipped: ") || !strings.Contains(l, fmt.Sprint("line ", i+2)) {
			t.Errorf("line %d said: %q, want the prefix and line %d", i, l, i+2)
		}
	}
}
