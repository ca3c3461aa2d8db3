package intelpt

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// corpusDir is libipt's test corpus with ptdump's expected output (see
// ../../shared/testdata/README.md).
const corpusDir = "../../shared/testdata/intelpt-libipt"

type corpusTest struct {
	name, cpu, org string
	args           []string
}

func loadManifest(t testing.TB) []corpusTest {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "MANIFEST.tsv"))
	if err != nil {
		t.Skipf("libipt corpus not available (%v)", err)
	}
	defer f.Close()
	var tests []corpusTest
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) != 4 {
			t.Fatalf("bad manifest line %q", sc.Text())
		}
		ct := corpusTest{name: fs[0], cpu: fs[1], org: fs[2]}
		if fs[3] != "-" {
			ct.args = strings.Fields(fs[3])
		}
		if ct.cpu != "-" {
			ct.args = append([]string{"--cpu", ct.cpu}, ct.args...)
		}
		tests = append(tests, ct)
	}
	return tests
}

// parsePTDumpArgs turns ptdump options into our options (test helper; the
// CLI has its own flags).
func parsePTDumpArgs(args []string) (Config, DumpOptions, error) {
	var cfg Config
	var opt DumpOptions
	num := func(i int, bits int) (uint64, error) {
		if i+1 >= len(args) {
			return 0, fmt.Errorf("%s: missing argument", args[i])
		}
		return strconv.ParseUint(args[i+1], 0, bits)
	}
	for i := 0; i < len(args); i++ {
		var v uint64
		var err error
		switch args[i] {
		case "--no-offset":
			opt.NoOffset = true
		case "--raw":
			opt.Raw = true
		case "--lastip":
			opt.LastIP = true
		case "--exec-mode":
			opt.ExecMode = true
		case "--no-pad":
			opt.NoPad = true
		case "--no-sync":
			opt.NoSync = true
		case "--time":
			opt.Time = true
		case "--tcal":
			opt.TCal = true
		case "--time-delta":
			opt.TimeDelta = true
		case "--no-tcal":
			opt.NoTCal = true
		case "--no-wall-clock":
			opt.NoWallClock = true
		case "--no-timing":
			opt.NoTiming = true
		case "--quiet":
			opt.Quiet = true
		case "--no-cyc":
			opt.NoCyc = true
		case "--keep-tcal-on-ovf":
			opt.KeepTCalOnOvf = true
		case "--cpu":
			if i+1 >= len(args) {
				return cfg, opt, fmt.Errorf("--cpu: missing argument")
			}
			c, err := ParseCPU(args[i+1])
			if err != nil {
				return cfg, opt, err
			}
			if args[i+1] != "none" {
				opt.CPU = &c
			}
			i++
		case "--mtc-freq":
			v, err = num(i, 8)
			cfg.MTCFreq = uint8(v)
			i++
		case "--nom-freq":
			v, err = num(i, 8)
			cfg.NomFreq = uint8(v)
			i++
		case "--cpuid-0x15.eax":
			v, err = num(i, 32)
			cfg.CPUID15EAX = uint32(v)
			i++
		case "--cpuid-0x15.ebx":
			v, err = num(i, 32)
			cfg.CPUID15EBX = uint32(v)
			i++
		default:
			return cfg, opt, fmt.Errorf("unknown option %s", args[i])
		}
		if err != nil {
			return cfg, opt, err
		}
	}
	return cfg, opt, nil
}

// normalize applies diff -b: runs of white space compare equal, trailing
// white space is ignored.
func normalize(b []byte) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return out
}

func TestLibiptCorpus(t *testing.T) {
	tests := loadManifest(t)
	pass := 0
	for _, ct := range tests {
		ok := t.Run(ct.name, func(t *testing.T) {
			pt, err := os.ReadFile(filepath.Join(corpusDir, ct.name+".pt"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(corpusDir, ct.name+"-ptdump.exp"))
			if err != nil {
				t.Fatal(err)
			}
			cfg, opt, err := parsePTDumpArgs(ct.args)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if _, err := Dump(&out, pt, cfg, opt); err != nil {
				t.Fatal(err)
			}
			g, w := normalize(out.Bytes()), normalize(want)
			if len(g) == 0 || strings.Join(g, "\n") != strings.Join(w, "\n") {
				t.Errorf("ptdump %s: output differs\n--- got\n%s\n--- want\n%s", strings.Join(ct.args, " "), out.String(), want)
			}
		})
		if ok {
			pass++
		}
	}
	t.Logf("libipt corpus: %d of %d tests pass", pass, len(tests))
}

// TestDumpOverflowsCorpus: Dump and DumpJSON count as overflows (loss)
// exactly the "ovf" lines of libipt's ptdump listing of each corpus trace,
// and the same number as stats.go's counter; DumpJSON applies the errata
// of --cpu as Dump does (skd007: an OVF after a bogus CYC).
func TestDumpOverflowsCorpus(t *testing.T) {
	total := 0
	for _, ct := range loadManifest(t) {
		exp, err := os.ReadFile(filepath.Join(corpusDir, ct.name+"-ptdump.exp"))
		if err != nil {
			continue
		}
		want := 0
		for _, l := range strings.Split(string(exp), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[1] == "ovf" {
				want++
			}
		}
		buf, err := os.ReadFile(filepath.Join(corpusDir, ct.name+".pt"))
		if err != nil {
			t.Fatal(err)
		}
		cfg, opt, err := parsePTDumpArgs(ct.args)
		if err != nil {
			t.Fatalf("%s: %v", ct.name, err)
		}
		var out bytes.Buffer
		res, err := Dump(&out, buf, cfg, opt)
		if err != nil {
			t.Fatal(err)
		}
		jres, err := DumpJSON(&out, buf, cfg, opt)
		if err != nil {
			t.Fatal(err)
		}
		scfg := cfg // stats has no --cpu: its errata by hand
		if opt.CPU != nil {
			scfg.Errata, _ = ErrataFor(*opt.CPU)
		}
		st := ComputeStats(buf, scfg)
		if res.Overflows != int64(want) || jres.Overflows != int64(want) || st.Overflows != int64(want) {
			t.Errorf("%s: overflows: Dump %d, DumpJSON %d, stats %d; ptdump lists %d", ct.name, res.Overflows, jres.Overflows, st.Overflows, want)
		}
		if (want > 0) != strings.Contains(res.Loss(), "overflow") {
			t.Errorf("%s: Loss() = %q with %d overflows", ct.name, res.Loss(), want)
		}
		total += want
	}
	if total == 0 {
		t.Fatal("no corpus trace has an ovf packet")
	}
	t.Logf("%d ovf packets", total)
}
