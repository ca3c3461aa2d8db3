package regdb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/iotap/iotap/mmiotrace"
)

// TestNameLog: the text output is the input, line for line and byte for
// byte, with the annotation Resolve and AppendNamed give after each
// access; the NDJSON output is one mmio_name record per access line of
// the input, at its line number, and encoding/json reads each.
func TestNameLog(t *testing.T) {
	rules := []BARRule{{ByID: true, ID: PCIID{Vendor: 0x1234, Device: 0x5678}, Domain: "E1000", Text: "1234:5678/0=E1000"}}
	n := NewNamer(Binder{Rules: rules})
	var out bytes.Buffer
	rd := mmiotrace.NewReader(strings.NewReader(namesLog))
	if err := n.NameLog(context.Background(), rd, &out, false); err != nil {
		t.Fatal(err)
	}
	in := strings.Split(strings.TrimSuffix(namesLog, "\n"), "\n")
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != len(in) {
		t.Fatalf("%d lines in, %d out:\n%s", len(in), len(got), out.String())
	}
	want := []string{" ; STATUS = 0x80080783 {", " ; IMC = 0xffffffff {", " ; IMC = 0xffffffff {", " ; unnamed E1000+0x1ffc", "", ""}
	access := 0
	for i, l := range got {
		rest, ok := strings.CutPrefix(l, in[i])
		if !ok {
			t.Fatalf("line %d: %q does not start with the input %q", i+1, l, in[i])
		}
		if f := strings.Fields(in[i]); f[0] != "R" && f[0] != "W" {
			if rest != "" {
				t.Errorf("line %d is not an access but was annotated: %q", i+1, l)
			}
			continue
		}
		if w := want[access]; !strings.HasPrefix(rest, w) || w == "" && rest != "" {
			t.Errorf("line %d: annotation %q, want %q...", i+1, rest, w)
		}
		access++
	}
	if n.Accesses != 6 || n.Named != 3 || n.Unnamed != 1 || n.NoDB != 1 || n.Outside != 1 {
		t.Errorf("counts %+v", n)
	}

	out.Reset()
	n = NewNamer(Binder{})
	if err := n.NameLog(context.Background(), mmiotrace.NewReader(strings.NewReader(namesLog)), &out, true); err != nil {
		t.Fatal(err)
	}
	var lines []int64
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var r NameRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Kind != NDJSONName {
			t.Fatalf("%q: %v", l, err)
		}
		lines = append(lines, r.Line)
	}
	if len(lines) != 6 || lines[0] != 6 || lines[5] != 11 {
		t.Errorf("record lines %v, want the 6 accesses at lines 6..11", lines)
	}

	// Cancelled: nothing written, the context's error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out.Reset()
	if err := NewNamer(Binder{}).NameLog(ctx, mmiotrace.NewReader(strings.NewReader(namesLog)), &out, false); err != context.Canceled || out.Len() != 0 {
		t.Errorf("cancelled: %v, %d bytes", err, out.Len())
	}
}

// TestBinderOptions: a variant or a --bar domain no database defines is
// ErrNotFound; a variant one database defines is applied to it.
func TestBinderOptions(t *testing.T) {
	db, err := LoadFile("testdata/native.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var shipped Binder
	if err := shipped.SetVariant("R2"); !errors.Is(err, ErrNotFound) || err.Error() != `variant "R2": no shipped database defines it` {
		t.Errorf("shipped R2: %v", err)
	}
	b := Binder{DBs: []*DB{db}}
	if err := b.SetVariant("NOPE"); !errors.Is(err, ErrNotFound) {
		t.Errorf("NOPE: %v", err)
	}
	if err := b.AddRule(BARRule{Domain: "E1000"}); !errors.Is(err, ErrNotFound) || len(b.Rules) != 0 {
		t.Errorf("rule to E1000 with the test database only: %v", err)
	}
	if err := b.AddRule(BARRule{Domain: "DEV"}); err != nil || len(b.Rules) != 1 {
		t.Errorf("rule to DEV: %v", err)
	}
	if err := b.SetVariant("R2"); err != nil {
		t.Fatal(err)
	}
	// NEW (bit 9 of irq) exists from variant R2 on.
	m, ok := b.DBs[0].Lookup("DEV", 0x8, 32)
	if !ok || !strings.Contains(string(m.AppendFormat(nil, 1<<9)), "NEW") {
		t.Errorf("variant R2 not applied: %v %q", ok, m.AppendFormat(nil, 1<<9))
	}
	r1 := Binder{DBs: []*DB{db}}
	if err := r1.SetVariant("R1"); err != nil {
		t.Fatal(err)
	}
	if m, _ := r1.DBs[0].Lookup("DEV", 0x8, 32); strings.Contains(string(m.AppendFormat(nil, 1<<9)), "NEW") {
		t.Errorf("variant R1 has NEW: %q", m.AppendFormat(nil, 1<<9))
	}
}
