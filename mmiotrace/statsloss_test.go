package mmiotrace

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// Analyze, FilterLog and ConvertLog say the same loss of a log, as the
// Reader does, and nothing of a complete one: kinds.log records 42 lost
// events; cut inside its last line, it is also truncated; with a bad
// line skipped, that too.
func TestStatsLoss(t *testing.T) {
	data, err := os.ReadFile("testdata/kinds.log")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cut := data[:len(data)-3]
	bad := append([]byte("VERSION 20070824\nR 4 x\n"), data[bytes.IndexByte(data, '\n')+1:]...)
	for _, c := range []struct {
		name string
		log  []byte
		want []string // substrings, in order, one per message
	}{
		{"kinds", data, []string{"42 lost events"}},
		{"cut", cut, []string{"42 lost events", "the log is cut"}},
		{"bad", bad, []string{"42 lost events", "1 bad lines skipped"}},
		{"complete", []byte("VERSION 20070824\nR 4 1.000000 1 0xfebc0008 0x1 0x0 0\n"), nil},
	} {
		rd := NewReader(bytes.NewReader(c.log))
		rd.SetKeepGoing(true)
		var rec Record
		for rd.ReadInto(&rec) == nil {
		}
		ref := rd.Loss()
		st, err := Analyze(bytes.NewReader(c.log), StatsOptions{KeepGoing: true})
		if err != nil {
			t.Fatalf("%s: Analyze: %v", c.name, err)
		}
		fst, err := FilterLog(ctx, bytes.NewReader(c.log), io.Discard, &Filter{}, FilterOptions{Workers: 1, KeepGoing: true})
		if err != nil {
			t.Fatalf("%s: FilterLog: %v", c.name, err)
		}
		cst, err := ConvertLog(ctx, bytes.NewReader(c.log), io.Discard, Formatter(false, nil), ConvertOptions{Workers: 1, KeepGoing: true})
		if err != nil {
			t.Fatalf("%s: ConvertLog: %v", c.name, err)
		}
		for what, got := range map[string][]string{"Reader": ref, "Analyze": st.Loss(), "FilterLog": fst.Loss(), "ConvertLog": cst.Loss()} {
			if len(got) != len(c.want) {
				t.Errorf("%s: %s says %q, want %d messages", c.name, what, got, len(c.want))
				continue
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("%s: %s message %d %q, want %q in it", c.name, what, i, got[i], w)
				}
			}
			if strings.Join(got, "|") != strings.Join(ref, "|") {
				t.Errorf("%s: %s says %q, the Reader %q", c.name, what, got, ref)
			}
		}
	}
}
