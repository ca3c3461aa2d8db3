package mmiotrace_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/vmlab"
	"github.com/iotap/iotap/mmiotrace"
)

// eduPCI is where TestLabSymbolsModule puts QEMU's edu device.
const eduPCI = "0000:00:07.0"

// TestLabSymbolsModule names the accesses of a driver loaded as a module:
// testdata/labdrv (a small PCI driver for QEMU's edu device) is built
// against the lab kernel's own source, loaded with insmod, and its probe
// captured with iotap mmio capture --bind on a trace_pc=1 kernel. Every
// access's PC must resolve, through the kallsyms and modules the bundle
// saved, to one of the driver's functions in [iotap_labdrv] at the
// address the guest's own /proc/kallsyms gives; iotap mmio read
// --symbols must print them as function+0xoff [iotap_labdrv]. The
// register values are the edu device's (ident 0x010000ed, liveness
// reads back the complement, 5! = 120), so the log is the real device's.
// The one access made through ioread32 (lib/iomap.c, out of line) is
// named ioread32+0x.. in the kernel image: mmiotrace records the PC of the
// access instruction, not its caller.
func TestLabSymbolsModule(t *testing.T) {
	ko := vmlab.BuildKernelModule(t, filepath.Join("testdata", "labdrv"))
	ko2, err := os.ReadFile(ko)
	if err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`
insmod /lib/iotap_labdrv.ko
test -e /sys/bus/pci/drivers/iotap_labdrv/%[1]s
cat /proc/modules > /out/modules.txt
rc=0; iotap mmio capture --bind %[1]s --bundle /out/b.tar.gz -o /out/labdrv.log 2>/out/capture.err || rc=$?
echo $rc > /out/capture.rc
grep -E '\[iotap_labdrv\]' /proc/kallsyms > /out/oracle.txt
rc=0; iotap mmio read --symbols /out/b.tar.gz /out/labdrv.log > /out/read.txt 2>/out/read.err || rc=$?
echo $rc > /out/read.rc
`, eduPCI)
	res := vmlab.Run(t, vmlab.Machine{
		KernelArgs:    "mmiotrace.trace_pc=1",
		Files:         map[string][]byte{"/lib/iotap_labdrv.ko": ko2},
		ExtraQEMUArgs: []string{"-device", "edu,addr=07.0"},
		Script:        script,
	})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (%d):\n%s", res.ExitCode, res.Console)
	}
	out := func(name string) string { return strings.TrimSpace(string(res.ReadOut(t, name))) }
	if got := out("capture.rc"); got != "0" {
		t.Fatalf("capture exit %s: %s", got, out("capture.err"))
	}
	if !strings.Contains(out("modules.txt"), "iotap_labdrv ") {
		t.Fatalf("module not loaded: %s", out("modules.txt"))
	}
	// The guest's own addresses of the driver's functions.
	oracle := map[string]uint64{}
	for _, l := range strings.Split(out("oracle.txt"), "\n") {
		var a uint64
		var typ, name string
		if n, _ := fmt.Sscanf(l, "%x %s %s", &a, &typ, &name); n == 3 && a != 0 {
			oracle[name] = a
		}
	}
	for _, f := range []string{"labdrv_probe", "labdrv_factorial", "labdrv_check_liveness"} {
		if oracle[f] == 0 {
			t.Fatalf("guest kallsyms lacks %s: %q", f, out("oracle.txt"))
		}
	}
	dir := t.TempDir()
	bundle := filepath.Join(dir, "b.tar.gz")
	if err := os.WriteFile(bundle, res.ReadOut(t, "b.tar.gz"), 0o600); err != nil {
		t.Fatal(err)
	}
	tab, err := mmiotrace.LoadSymbols(bundle)
	if err != nil {
		t.Fatal(err)
	}
	log := res.ReadOut(t, "labdrv.log")
	rd := mmiotrace.NewReader(bytes.NewReader(log))
	var rec mmiotrace.Record
	funcs := map[string]int{}
	var accesses int
	var ident, fact []uint64
	for {
		err := rd.ReadInto(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind != mmiotrace.KindRead && rec.Kind != mmiotrace.KindWrite {
			continue
		}
		accesses++
		l, ok := tab.Lookup(rec.PC)
		if !ok {
			t.Errorf("unresolved PC while the module is loaded: %s", rec.Line)
			continue
		}
		if l.Func == "ioread32" && l.Module == "" {
			// The probe's ident read goes through lib/iomap.c's
			// out-of-line accessor: mmiotrace records the PC of the
			// access instruction, which is there, not in the driver.
			funcs["ioread32"]++
			ident = append(ident, rec.Value)
			continue
		}
		if l.Module != "iotap_labdrv" {
			t.Errorf("%s: %s: want a function of [iotap_labdrv]", rec.Line, l)
			continue
		}
		if a, ok := oracle[l.Func]; !ok || rec.PC-l.Offset != a {
			t.Errorf("%s: %s, but the guest's kallsyms has %s at %#x", rec.Line, l, l.Func, a)
		}
		funcs[l.Func]++
		if rec.Kind == mmiotrace.KindRead && l.Func == "labdrv_factorial" {
			fact = append(fact, rec.Value)
		}
	}
	t.Logf("%d accesses in %v", accesses, funcs)
	if funcs["ioread32"] != 1 || funcs["labdrv_check_liveness"] != 2 || funcs["labdrv_factorial"] < 3 {
		t.Errorf("accesses by function %v: want the probe's ident read (in ioread32), 2 liveness accesses, the factorial's write, status polls and read", funcs)
	}
	if len(ident) != 1 || ident[0] != 0x010000ed {
		t.Errorf("ident reads %#x, want one read of 0x010000ed", ident)
	}
	if len(fact) == 0 || fact[len(fact)-1] != 120 {
		t.Errorf("factorial reads %v: the last must be 5! = 120", fact)
	}

	// The CLI, in the guest: every access line names its code.
	if got := out("read.rc"); got != "0" {
		t.Fatalf("mmio read --symbols exit %s: %s", got, out("read.err"))
	}
	var named int
	for _, l := range strings.Split(out("read.txt"), "\n") {
		if strings.HasPrefix(l, "R ") && strings.Contains(l, "\tioread32+0x") {
			named++
		}
		if strings.Contains(l, "[iotap_labdrv]") {
			named++
			if !strings.Contains(l, "labdrv_") || !strings.Contains(l, "+0x") {
				t.Errorf("read line names no function+0xoff: %s", l)
			}
		}
	}
	if named != accesses {
		t.Errorf("mmio read --symbols: %d lines name [iotap_labdrv] or ioread32, want %d (every access):\n%s", named, accesses, out("read.txt"))
	}
}
