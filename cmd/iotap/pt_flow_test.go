package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// ptFlowKnownMisses are the corpus tests `iotap pt flow` does not
// reproduce yet, by "name/decoder", with the reason (also in
// docs/intelpt.md). A test listed here that passes, or one not listed that
// fails, fails TestPTFlowLibiptCorpus.
var ptFlowKnownMisses = map[string]string{}

var ptxedOptRE = regexp.MustCompile(`(?m)^[ \t]*;[ \t]*opt:ptxed[ \t]+(.*?)[ \t]*$`)

// ptxedCase is one NAME-ptxed.exp of libipt's corpus with the command line
// libipt's test.bash runs ptxed with.
type ptxedCase struct {
	name string
	args []string // after "pt flow --insn-decoder|--block-decoder"
}

func ptxedCases(t *testing.T) []ptxedCase {
	f, err := os.Open(filepath.Join(ptCorpus, "MANIFEST.tsv"))
	if err != nil {
		t.Skipf("libipt corpus not available: %v", err)
	}
	defer f.Close()
	var cases []ptxedCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		name := fs[0]
		if _, err := os.Stat(filepath.Join(ptCorpus, name+"-ptxed.exp")); err != nil {
			continue
		}
		ptt, err := os.ReadFile(filepath.Join(ptCorpus, name+".ptt"))
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"--raw", filepath.Join(ptCorpus, name+".bin") + ":" + fs[2]}
		if fs[1] != "-" {
			args = append(args, "--cpu", fs[1])
		}
		for _, m := range ptxedOptRE.FindAllSubmatch(ptt, -1) {
			opts := strings.Fields(string(m[1]))
			for i, o := range opts {
				// File arguments are relative to the corpus directory.
				if i > 0 && (opts[i-1] == "--raw" || opts[i-1] == "--elf") && !filepath.IsAbs(o) {
					opts[i] = filepath.Join(ptCorpus, o)
				}
			}
			args = append(args, opts...)
		}
		args = append(args, "--no-inst", "--check", "--pt", filepath.Join(ptCorpus, name+".pt"))
		cases = append(cases, ptxedCase{name, args})
	}
	return cases
}

// TestPTFlowLibiptCorpus runs `iotap pt flow` on every NAME-ptxed.exp of
// libipt's corpus, with the test's options, once with --insn-decoder and
// once with --block-decoder as libipt's CMake tests do, and compares with
// the expected ptxed output like libipt's harness (diff -ub).
func TestPTFlowLibiptCorpus(t *testing.T) {
	cases := ptxedCases(t)
	total, pass := 0, 0
	var misses []string
	for _, c := range cases {
		want, err := os.ReadFile(filepath.Join(ptCorpus, c.name+"-ptxed.exp"))
		if err != nil {
			t.Fatal(err)
		}
		okBoth := true
		for _, dec := range []string{"--insn-decoder", "--block-decoder"} {
			key := c.name + "/" + strings.TrimPrefix(strings.TrimSuffix(dec, "-decoder"), "--")
			args := append([]string{"pt", "flow", "--allow-loss", dec}, c.args...) // the corpus decodes bad packets on purpose
			out, stderr, err := ptRun(t, args...)
			ok := err == nil && ptNormalize(out) == ptNormalize(string(want))
			reason, known := ptFlowKnownMisses[key]
			switch {
			case ok && known:
				t.Errorf("%s: passes but is listed as a known miss (%s): remove it", key, reason)
			case !ok && !known:
				t.Errorf("%s: iotap %s\nerr: %v %s\ngot:\n%s\nwant:\n%s", key, strings.Join(args, " "), err, stderr, out, want)
			}
			if !ok {
				okBoth = false
				misses = append(misses, key)
			}
		}
		total++
		if okBoth {
			pass++
		}
	}
	sort.Strings(misses)
	t.Logf("libipt ptxed corpus: %d/%d tests reproduced by both decoders; misses: %v", pass, total, misses)
	fmt.Fprintf(os.Stderr, "libipt ptxed corpus: %d/%d tests reproduced by both decoders\n", pass, total)
}

// TestPTFlowJSON: --json writes one valid JSON object per line, with the
// same instructions as the text listing.
func TestPTFlowJSON(t *testing.T) {
	cases := ptxedCases(t)
	checked := 0
	for _, c := range cases {
		if c.name != "ptxed-block-stat" && c.name != "ptet-int-iret" && c.name != "ptxed-resync-bad_query-tip" {
			continue
		}
		checked++
		text, _, err := ptRun(t, append([]string{"pt", "flow", "--block:show-blocks"}, c.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		js, _, err := ptRun(t, append([]string{"pt", "flow", "--json", "--block:show-blocks"}, c.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var ips []string
		for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
			if !strings.HasPrefix(l, "[") && !strings.Contains(l, ":") && !strings.HasSuffix(l, ".") {
				ips = append(ips, strings.TrimLeft(l, "0"))
			}
		}
		var jips []string
		for i, l := range strings.Split(strings.TrimSpace(js), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%s: line %q: %v", c.name, l, err)
			}
			if i == 0 && (m["kind"] != "input" || m["source"] != "pt") {
				t.Fatalf("%s: first record %s, want the input record", c.name, l)
			}
			if m["kind"] == "pt_insn" {
				jips = append(jips, strings.TrimPrefix(m["ip"].(string), "0x"))
			}
		}
		if strings.Join(ips, ",") != strings.Join(jips, ",") {
			t.Errorf("%s: text instructions %v, json %v", c.name, ips, jips)
		}
	}
	if checked != 3 {
		t.Fatalf("checked %d cases", checked)
	}
}
