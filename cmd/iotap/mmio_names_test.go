package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/vmlab"
)

// namesLog is a small hand-written log: an 82540EM at 00:03.0 (BAR0
// 0xfebc0000, 128 KiB) and a device without a shipped database at 00:04.0.
const namesLog = `VERSION 20070824
PCIDEV 0018 8086100e b febc0000 c001 0 0 0 0 0 20000 40 0 0 0 0 0 e1000
PCIDEV 0020 12345678 a fe000000 0 0 0 0 0 0 10000 0 0 0 0 0 0 
MAP 1.000000 1 0xfebc0000 0xffffc90000080000 0x20000 0x0 0
R 4 1.000100 1 0xfebc0008 0x80080783 0x0 0
W 4 1.000200 1 0xfebc00d8 0xffffffff 0x0 0
W 4 1.000300 1 0xfebc0000 0x04000240 0x0 0
R 4 1.000400 1 0xfebc5404 0x80005634 0x0 0
R 4 1.000500 1 0xfebc7ff0 0x0 0x0 0
R 1 1.000550 1 0xfebc0001 0x2 0x0 0
MAP 1.000600 2 0xfe000000 0xffffc90000100000 0x10000 0x0 0
W 4 1.000700 2 0xfe000004 0x121 0x0 0
R 4 1.000800 2 0xfe001250 0x6 0x0 0
W 4 1.000900 0 0xfd000000 0x1 0x0 0
MARK 1.001000 done
`

func writeNamesLog(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.log")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func runNames(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{"mmio", "names"}, args...), &out, &errb)
	return out.String(), errb.String(), err
}

func TestMMIONamesBuiltinByPCIID(t *testing.T) {
	p := writeNamesLog(t, namesLog)
	out, errs, err := runNames(t, p)
	if err != nil {
		t.Fatal(err, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	in := strings.Split(strings.TrimSuffix(namesLog, "\n"), "\n")
	if len(lines) != len(in) {
		t.Fatalf("%d lines out, %d in", len(lines), len(in))
	}
	for i := range in {
		if !strings.HasPrefix(lines[i], in[i]) {
			t.Errorf("line %d does not start with the input line:\n%s", i+1, lines[i])
		}
	}
	want := map[int]string{
		5:  " ; STATUS = 0x80080783 {FD, LU, SPEED=1000, ASDV=1000, MTXCKOK, GIO_MASTER_EN, unk=0x80000000}",
		6:  " ; IMC = 0xffffffff {TXDW, TXQE, LSC, RXSEQ, RXDMT0, RXO, RXT0, MDAC, RXCFG, GPI_EN0, GPI_EN1, GPI_EN2, GPI_EN3, TXD_LOW, SRPD, unk=0xfffe0120}",
		7:  " ; CTRL = 0x04000240 {SLU, SPEED=1000, RST}",
		8:  " ; RAH[0] = 0x80005634 {RAH=0x5634, ASEL=DEST, AV}",
		9:  " ; unnamed E1000+0x7ff0",
		10: " ; CTRL+0x1 = 0x02 {SPEED=1000}",
		12: "",
		14: "",
	}
	for n, suffix := range want {
		if got := strings.TrimPrefix(lines[n-1], in[n-1]); got != suffix {
			t.Errorf("line %d: got %q, want %q", n, got, suffix)
		}
	}
	for _, s := range []string{
		"mmio names: 9 accesses: 5 named, 1 unnamed, 2 in BARs without a database, 1 outside any PCI BAR",
		"unnamed offsets: E1000+0x7ff0 (1)",
		"2 accesses to 0000:00:04.0 BAR0 (1234:5678) have no database: use --db and --bar 0000:00:04.0/0=DOMAIN",
		"1 accesses lie outside every PCI BAR",
	} {
		if !strings.Contains(errs, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errs)
		}
	}
}

func TestMMIONamesXMLDatabaseBarVariant(t *testing.T) {
	p := writeNamesLog(t, namesLog)
	xml := filepath.Join("..", "..", "regdb", "testdata", "rnndb", "main.xml")
	out, errs, err := runNames(t, "--db", xml, "--db", "e1000", "--bar", "0000:00:04.0/0=DEV", "--variant", "CHIP_A", p)
	if err != nil {
		t.Fatal(err, errs)
	}
	for _, s := range []string{
		"W 4 1.000700 2 0xfe000004 0x121 0x0 0 ; CTRL = 0x00000121 {ENABLE, SPEED=S1000, unk=0x100}",
		"R 4 1.000800 2 0xfe001250 0x6 0x0 0 ; CH[2].SLOT[1].CFG = 0x00000006 {KIND=OUT, EN}",
		"W 4 1.000200 1 0xfebc00d8 0xffffffff 0x0 0 ; IMC = 0xffffffff",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q", s)
		}
	}
	if !strings.Contains(errs, "9 accesses: 7 named, 1 unnamed, 0 in BARs without a database, 1 outside") {
		t.Errorf("summary: %s", errs)
	}
}

func TestMMIONamesBarByIDAndOutput(t *testing.T) {
	p := writeNamesLog(t, namesLog)
	xml := filepath.Join("..", "..", "regdb", "testdata", "rnndb", "main.xml")
	outFile := filepath.Join(t.TempDir(), "named.txt.gz")
	stdout, errs, err := runNames(t, "--db", xml, "--bar", "1234:5678/0=DEV", "-o", outFile, p)
	if err != nil {
		t.Fatal(err, errs)
	}
	if stdout != "" {
		t.Errorf("stdout not empty with -o: %q", stdout)
	}
	fi, err := os.Stat(outFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("output %v mode %v, want 0600", err, fi.Mode())
	}
	f, err := os.Open(outFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("output is not gzip: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	out := string(raw)
	if !strings.Contains(out, "W 4 1.000700 2 0xfe000004 0x121 0x0 0 ; CTRL = 0x00000121 {ENABLE, SPEED=S1000, TURBO}") {
		t.Errorf("BAR bound by PCI id not named:\n%s", out)
	}
	if !strings.Contains(errs, "2 named") || !strings.Contains(errs, "6 in BARs without a database") {
		t.Errorf("summary: %s", errs)
	}
}

func TestMMIONamesJSON(t *testing.T) {
	p := writeNamesLog(t, namesLog)
	out, _, err := runNames(t, "--json", p)
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("bad NDJSON line %q: %v", l, err)
		}
		recs = append(recs, m)
	}
	if len(recs) != 10 || recs[0]["kind"] != "input" || recs[0]["file"] != p {
		t.Fatalf("%d objects, want an input record and one per access (9)", len(recs))
	}
	recs = recs[1:]
	imc := recs[1]
	if imc["kind"] != "mmio_name" || imc["register"] != "IMC" || imc["offset"] != "0xd8" || imc["location"] != "0000:00:03.0/0+0xd8" || imc["domain"] != "E1000" ||
		imc["bar"] != "0000:00:03.0/0" || imc["line"] != 6.0 || imc["access"] != "W" || imc["reg_access"] != "w" || imc["doc"] != "Interrupt Mask Clear" {
		t.Errorf("IMC record: %v", imc)
	}
	rah := recs[3]
	if rah["register"] != "RAH[0]" || len(rah["index"].([]any)) != 1 {
		t.Errorf("RAH record: %v", rah)
	}
	fields := rah["fields"].([]any)
	asel := fields[1].(map[string]any)
	if asel["name"] != "ASEL" || asel["bits"] != "17:16" || asel["enum"] != "DEST" {
		t.Errorf("RAH ASEL field: %v", asel)
	}
	if reg, ok := recs[8]["register"]; !ok || reg != nil || recs[8]["bar"] != nil || recs[8]["domain"] != nil {
		t.Errorf("access outside BARs: %v", recs[8])
	}
}

func TestMMIONamesErrors(t *testing.T) {
	p := writeNamesLog(t, namesLog)
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--bar", "0000:00:04.0=DEV", p}, "want PCIADDR/N=DOMAIN", exitUsage},
		{[]string{"--bar", "0000:00:04.0/9=DEV", p}, "BAR number", exitUsage},
		{[]string{"--bar", "0000:00:04.0/0=NOPE", p}, "no database has a domain \"NOPE\"", exitUsage},
		{[]string{"--db", "nosuchdb", p}, "not a shipped database", exitUsage},
		{[]string{"--db", "e1000", "--variant", "X9", p}, "--variant \"X9\": no database defines it", exitUsage},
		{[]string{"--variant", "X9", p}, "--variant \"X9\": no shipped database defines it", exitUsage},
		{[]string{filepath.Join(t.TempDir(), "missing.log")}, "no such file", exitFailure},
	} {
		_, _, err := runNames(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
			continue
		}
		if got := exitCode(err, &bytes.Buffer{}); got != tc.code {
			t.Errorf("%v: exit %d, want %d", tc.args, got, tc.code)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("domains:\n  D:\n    registers:\n      X: {offset: zz}\n"), 0o600)
	if _, _, err := runNames(t, "--db", bad, p); err == nil || !strings.Contains(err.Error(), "bad.yaml:4:") {
		t.Errorf("bad database: %v, want its file and line", err)
	}
}

func TestMMIONamesLostEvents(t *testing.T) {
	p := writeNamesLog(t, namesLog+"MARK 1.002000 Lost 12 events.\n")
	_, _, err := runNames(t, p)
	var ce *codeError
	if !errors.As(err, &ce) || ce.code != exitDataLost || !strings.Contains(err.Error(), "12 lost events") {
		t.Errorf("err = %v, want exit 3 for lost events", err)
	}
	if _, _, err := runNames(t, "--allow-loss", p); err != nil {
		t.Errorf("--allow-loss: %v", err)
	}
}

// TestLabMMIONames traces the e1000 driver binding to the lab's 82540EM on
// the real lab kernel (plain tracefs, so it does not depend on iotap's
// capture), brings the interface up, and names the log with the shipped
// database: every access of BAR0 must be named.
func TestLabMMIONames(t *testing.T) {
	res := vmlab.Run(t, vmlab.Machine{NIC: true, Script: `
T=/sys/kernel/tracing
echo mmiotrace > $T/current_tracer
cat $T/trace_pipe > /tmp/e1000.log &
P=$!
sleep 1
echo ` + vmlab.E1000PCI + ` > /sys/bus/pci/drivers/e1000/unbind
echo ` + vmlab.E1000PCI + ` > /sys/bus/pci/drivers/e1000/bind
lab_wait 20 test -e /sys/class/net/eth0
ip link set eth0 up
sleep 3
echo "names lab: up" > $T/trace_marker
ip link set eth0 down
sleep 2
# the kernel refuses to change the tracer while trace_pipe is open
kill $P
wait $P || true
echo nop > $T/current_tracer
cp /tmp/e1000.log /out/e1000.log
`})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (exit %d):\n%s", res.ExitCode, res.Console)
	}
	log := filepath.Join(res.Out, "e1000.log")
	if p := os.Getenv("IOTAP_SAVE_NAMES_LOG"); p != "" {
		os.WriteFile(p, res.ReadOut(t, "e1000.log"), 0o600)
	}
	out, errs, err := runNames(t, log)
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	t.Log(strings.TrimSpace(errs))
	if !strings.Contains(errs, " 0 unnamed, 0 in BARs without a database") {
		t.Errorf("not every access was named:\n%s", errs)
	}
	for _, want := range []string{" ; IMC = 0xffffffff ", " ; STATUS = ", " ; CTRL = ", " ; RCTL = ", " ; TCTL = ", " ; RAL[0] = "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if (strings.HasPrefix(l, "R ") || strings.HasPrefix(l, "W ")) && strings.Contains(l, "0xfeb") && !strings.Contains(l, " ; ") {
			t.Errorf("access without a name: %s", l)
			break
		}
	}
}

// namesSamples are real lab captures of the e1000 driver; each has a
// golden table of the distinct decodings in regdb/testdata.
var namesSamples = []struct{ log, golden string }{
	{"../../mmiotrace/testdata/e1000-bind.log", "../../regdb/testdata/e1000-bind.names.golden"},
	{"../../testdata/mmiotrace/e1000-probe.log", "../../regdb/testdata/e1000-probe.names.golden"},
}

// TestMMIONamesGolden names the bundled lab captures with the shipped e1000
// database. The golden file lists every distinct decoding (kind, register,
// value, fields) with its count, sorted, so that it can be reviewed against
// the datasheet; IOTAP_UPDATE_GOLDEN=1 rewrites it.
func TestMMIONamesGolden(t *testing.T) {
	for _, s := range namesSamples {
		t.Run(filepath.Base(s.log), func(t *testing.T) {
			in, err := os.ReadFile(s.log)
			if os.IsNotExist(err) {
				t.Skipf("%s not recorded yet", s.log)
			}
			if err != nil {
				t.Fatal(err)
			}
			out, errs, err := runNames(t, s.log)
			if err != nil {
				t.Fatalf("%v\n%s", err, errs)
			}
			inLines := strings.Split(strings.TrimSuffix(string(in), "\n"), "\n")
			outLines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(inLines) != len(outLines) {
				t.Fatalf("%d lines in, %d out", len(inLines), len(outLines))
			}
			var accesses, imcAll, status int
			counts := map[string]int{}
			for i, l := range outLines {
				if !strings.HasPrefix(l, inLines[i]) {
					t.Fatalf("line %d changed:\n in %s\nout %s", i+1, inLines[i], l)
				}
				f := strings.Fields(inLines[i])
				if len(f) < 6 || (f[0] != "R" && f[0] != "W") {
					if l != inLines[i] {
						t.Errorf("line %d is not an access but was annotated: %s", i+1, l)
					}
					continue
				}
				accesses++
				_, dec, ok := strings.Cut(l, " ; ")
				if !ok {
					t.Errorf("line %d: access not named: %s", i+1, l)
					continue
				}
				counts[f[0]+" "+dec]++
				off := strings.TrimPrefix(f[4], "0x")
				// datasheet facts: IMC is at 0xd8, STATUS at 0x8 of BAR0 (0xfebc0000 in the lab)
				if f[0] == "W" && off == "febc00d8" && f[5] == "0xffffffff" {
					imcAll++
					if !strings.HasPrefix(dec, "IMC = 0xffffffff {") {
						t.Errorf("line %d: a write of 0xffffffff at 0xd8 is %q, want IMC", i+1, dec)
					}
				}
				if f[0] == "R" && off == "febc0008" {
					status++
					if !strings.HasPrefix(dec, "STATUS = ") || !strings.Contains(dec, "{FD, ") {
						t.Errorf("line %d: a read at 0x8 is %q, want STATUS with FD (QEMU: full duplex)", i+1, dec)
					}
				}
			}
			if imcAll == 0 || status == 0 {
				t.Errorf("%d IMC writes of 0xffffffff and %d STATUS reads; the driver does both in reset", imcAll, status)
			}
			sum := fmt.Sprintf("mmio names: %d accesses: %d named, 0 unnamed, 0 in BARs without a database, 0 outside any PCI BAR", accesses, accesses)
			if !strings.Contains(errs, sum) {
				t.Errorf("summary:\n%s\nwant %s", errs, sum)
			}
			keys := make([]string, 0, len(counts))
			for k := range counts {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var b strings.Builder
			fmt.Fprintf(&b, "# iotap mmio names %s: %d accesses, %d distinct decodings (count, kind, decoding)\n", filepath.Base(s.log), accesses, len(keys))
			for _, k := range keys {
				fmt.Fprintf(&b, "%6d %s\n", counts[k], k)
			}
			if os.Getenv("IOTAP_UPDATE_GOLDEN") == "1" {
				if err := os.WriteFile(s.golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(s.golden)
			if err != nil {
				t.Fatalf("%v (IOTAP_UPDATE_GOLDEN=1 writes it)", err)
			}
			if got := b.String(); got != string(want) {
				t.Errorf("decodings differ from %s (IOTAP_UPDATE_GOLDEN=1 rewrites it):\n%s", s.golden, lineDiff(string(want), got))
			}
		})
	}
}

// lineDiff lists the lines only in want (-) or only in got (+).
func lineDiff(want, got string) string {
	w := map[string]bool{}
	for _, l := range strings.Split(want, "\n") {
		w[l] = true
	}
	g := map[string]bool{}
	var b strings.Builder
	for _, l := range strings.Split(got, "\n") {
		g[l] = true
		if !w[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	return b.String()
}

// A log that cannot be read to its end (a bad line without --keep-going)
// leaves no output file, neither a partial one nor one that looks
// complete, and no temporary file; a readable log is committed.
func TestMMIONamesOutputAbortedOnReadError(t *testing.T) {
	dir := t.TempDir()
	bad := writeNamesLog(t, namesLog+"R 4 notatime 1 0xfebc0008 0x1 0x0 0\n")
	out := filepath.Join(dir, "named.txt")
	_, errs, code := usbRun(t, "mmio", "names", "--keep-going=false", bad, "-o", out)
	if code != exitFailure || !strings.Contains(errs, "mmio names: ") {
		t.Errorf("bad line: exit %d (want 1): %s", code, errs)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("after a read error the output directory holds %v, want nothing", ents)
	}
	if _, errs, code := usbRun(t, "mmio", "names", writeNamesLog(t, namesLog), "-o", out); code != 0 {
		t.Fatalf("good log: exit %d: %s", code, errs)
	}
	if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), " ; ") {
		t.Errorf("good log: output %q, %v", b, err)
	}
}
