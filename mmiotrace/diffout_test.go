package mmiotrace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteDiffAgainstGNUDiff: the lab log against a copy with accesses
// dropped, inserted and changed. The lines only in A and only in B are as
// many as GNU diff --minimal's deletions and insertions over the two
// register sequences (a shortest edit script has one length), the NDJSON
// output has a record per text line with the same op and lines, and both
// summaries carry the same counts.
func TestWriteDiffAgainstGNUDiff(t *testing.T) {
	gnu, err := exec.LookPath("diff")
	if err != nil {
		t.Skip("GNU diff (the oracle) not installed")
	}
	data, err := os.ReadFile("testdata/e1000-bind.log")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	var edited strings.Builder
	access := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "R ") || strings.HasPrefix(l, "W ") {
			access++
			switch {
			case access%97 == 0:
				continue // dropped
			case access%89 == 0:
				edited.WriteString(l)
				l = strings.Replace(l, " 0x", " 0x1", 2) // another address: inserted and dropped
			case access%83 == 0:
				f := strings.Fields(l)
				f[5] = "0x5a5a5a5a" // another value
				l = strings.Join(f, " ") + "\n"
			}
		}
		edited.WriteString(l)
	}
	a, err := Accesses(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Accesses(strings.NewReader(edited.String()))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := Diff(a, b, 20000)
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	keys := func(name string, seq []Access) string {
		var sb strings.Builder
		for _, x := range seq {
			fmt.Fprintf(&sb, "%s %s/%d\n", x.Kind, x.Key, x.Key.Width)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(sb.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out, _ := exec.Command(gnu, "--minimal", keys("a", a), keys("b", b)).Output()
	var del, ins int
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(l, "< "):
			del++
		case strings.HasPrefix(l, "> "):
			ins++
		}
	}

	var text, js bytes.Buffer
	if err := WriteDiff(&text, a, b, ops, DiffFormat{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteDiff(&js, a, b, ops, DiffFormat{JSON: true}); err != nil {
		t.Fatal(err)
	}
	tl := strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n")
	jl := strings.Split(strings.TrimSuffix(js.String(), "\n"), "\n")
	if len(tl) != len(jl) {
		t.Fatalf("%d text lines, %d NDJSON records", len(tl), len(jl))
	}
	var onlyA, onlyB, changed int
	opName := map[byte]string{'-': "only_a", '+': "only_b", '~': "changed"}
	for i, l := range tl[:len(tl)-1] {
		r := map[string]any{}
		if err := json.Unmarshal([]byte(jl[i]), &r); err != nil {
			t.Fatal(err)
		}
		if r["op"] != opName[l[0]] {
			t.Fatalf("line %d: text %q, NDJSON op %v", i+1, l, r["op"])
		}
		if v, ok := r["a_line"].(float64); ok && !strings.Contains(l, fmt.Sprintf("A:%d ", int64(v))) {
			t.Errorf("line %d: text %q, NDJSON a_line %v", i+1, l, v)
		}
		switch l[0] {
		case '-':
			onlyA++
		case '+':
			onlyB++
		case '~':
			changed++
		}
	}
	if onlyA != del || onlyB != ins || del == 0 || ins == 0 || changed == 0 {
		t.Errorf("only in A %d, only in B %d, changed %d; GNU diff: %d deletions, %d insertions", onlyA, onlyB, changed, del, ins)
	}
	wantSum := fmt.Sprintf("A %d accesses, B %d: %d identical, %d same register with other value, %d only in A, %d only in B",
		len(a), len(b), len(ops)-onlyA-onlyB-changed, changed, onlyA, onlyB)
	if tl[len(tl)-1] != wantSum {
		t.Errorf("summary %q, want %q", tl[len(tl)-1], wantSum)
	}
	var s struct{ A, B, Same, Changed, OnlyA, OnlyB int }
	if err := json.Unmarshal([]byte(jl[len(jl)-1]), &map[string]any{}); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(strings.NewReplacer("a_accesses", "A", "b_accesses", "B", "only_a", "OnlyA", "only_b", "OnlyB").Replace(jl[len(jl)-1])), &s)
	sum := DiffCounts{s.A, s.B, s.Same, s.Changed, s.OnlyA, s.OnlyB}
	if sum != (DiffCounts{len(a), len(b), len(ops) - onlyA - onlyB - changed, changed, onlyA, onlyB}) {
		t.Errorf("NDJSON summary %+v", sum)
	}
}
