package mmiotrace_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/iotap/iotap/internal/vmlab"
	"github.com/iotap/iotap/ksym"
	"github.com/iotap/iotap/mmiotrace"
)

// TestLabSymbolsE1000 captures the e1000 probe on a kernel booted with
// mmiotrace.trace_pc=1 and names every access's PC with the kallsyms the
// bundle saved: all resolve, to the e1000 driver's functions (e1000 is
// built into the lab kernel, so no [module]). A second capture with
// kptr_restrict=2 (kallsyms all zeros) warns and still writes its bundle.
func TestLabSymbolsE1000(t *testing.T) {
	script := fmt.Sprintf(`
rc=0; iotap mmio capture --bind %[1]s --bundle /out/b.tar.gz -o /out/e1000.log 2>/out/capture.err || rc=$?
echo $rc > /out/capture.rc
grep -E ' (e1000_reset_hw|e1000_probe)$' /proc/kallsyms > /out/oracle.txt
echo 2 > /proc/sys/kernel/kptr_restrict
rc=0; iotap mmio capture --bind %[1]s --bundle /out/hidden.tar.gz -o /out/hidden.log 2>/out/hidden.err || rc=$?
echo $rc > /out/hidden.rc
`, vmlab.E1000PCI)
	res := vmlab.Run(t, vmlab.Machine{NIC: true, KernelArgs: "mmiotrace.trace_pc=1", Script: script})
	if res.ExitCode != 0 {
		t.Fatalf("guest script failed (%d):\n%s", res.ExitCode, res.Console)
	}
	rc := func(name string) string { return strings.TrimSpace(string(res.ReadOut(t, name))) }
	if got := rc("capture.rc"); got != "0" {
		t.Fatalf("capture exit %s: %s", got, res.ReadOut(t, "capture.err"))
	}
	if e := rc("capture.err"); strings.Contains(e, "warning") {
		t.Errorf("capture with trace_pc=1 warned: %s", e)
	}
	dir := t.TempDir()
	bundle := filepath.Join(dir, "b.tar.gz")
	if err := os.WriteFile(bundle, res.ReadOut(t, "b.tar.gz"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("IOTAP_SAVE_LAB_DIR"); d != "" {
		os.WriteFile(filepath.Join(d, "e1000-pc.tar.gz"), res.ReadOut(t, "b.tar.gz"), 0o600)
		os.WriteFile(filepath.Join(d, "e1000-pc.log"), res.ReadOut(t, "e1000.log"), 0o600)
	}
	tab, err := mmiotrace.LoadSymbols(bundle)
	if err != nil {
		t.Fatal(err)
	}
	// The guest kernel's own addresses of two e1000 functions (e1000e
	// has static functions of the same names: both are kept).
	oracle := map[string][]uint64{}
	for _, l := range strings.Split(rc("oracle.txt"), "\n") {
		var a uint64
		var typ, name string
		if n, _ := fmt.Sscanf(l, "%x %s %s", &a, &typ, &name); n == 3 {
			oracle[name] = append(oracle[name], a)
		}
	}
	if len(oracle) != 2 || len(oracle["e1000_reset_hw"]) != 1 {
		t.Fatalf("oracle symbols: %q", rc("oracle.txt"))
	}
	rd := mmiotrace.NewReader(bytes.NewReader(res.ReadOut(t, "e1000.log")))
	var rec mmiotrace.Record
	funcs := map[string]int{}
	var accesses, unresolved int
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
		if rec.PC == 0 {
			t.Fatalf("access without a PC on a trace_pc=1 kernel: %s", rec.Line)
		}
		l, ok := tab.Lookup(rec.PC)
		if !ok {
			unresolved++
			t.Errorf("unresolved PC: %s", rec.Line)
			continue
		}
		if l.Module != "" {
			t.Errorf("%s: module %q, but e1000 is built in", rec.Line, l.Module)
		}
		funcs[l.Func]++
		if as, ok := oracle[l.Func]; ok && !slices.Contains(as, rec.PC-l.Offset) {
			t.Errorf("%s: %s, but the guest's kallsyms has %s at %#x", rec.Line, l, l.Func, as)
		}
	}
	if accesses < 100 {
		t.Fatalf("only %d accesses", accesses)
	}
	t.Logf("%d accesses, %d unresolved, in %d functions: %v", accesses, unresolved, len(funcs), funcs)
	st, err := mmiotrace.Analyze(bytes.NewReader(res.ReadOut(t, "e1000.log")), mmiotrace.StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	mmiotrace.WriteFuncStats(&sb, mmiotrace.ByFunction(st, tab.Name), 8, 3, func(mmiotrace.RegKey) string { return "" })
	t.Log(sb.String())
	if funcs["e1000_reset_hw"] == 0 {
		t.Errorf("no access from e1000_reset_hw: %v", funcs)
	}
	var e1000 int
	for f, n := range funcs {
		if strings.HasPrefix(f, "e1000") {
			e1000 += n
		}
	}
	if e1000*10 < accesses*9 {
		t.Errorf("only %d of %d accesses in e1000* functions: %v", e1000, accesses, funcs)
	}

	// kptr_restrict=2: a clear warning, the capture and bundle go on.
	if got := rc("hidden.rc"); got != "0" {
		t.Fatalf("capture with hidden kallsyms exit %s: %s", got, res.ReadOut(t, "hidden.err"))
	}
	if e := rc("hidden.err"); !strings.Contains(e, "kptr_restrict") || !strings.Contains(e, "bare PCs") {
		t.Errorf("hidden kallsyms: stderr lacks the reason: %s", e)
	}
	hidden := filepath.Join(dir, "hidden.tar.gz")
	if err := os.WriteFile(hidden, res.ReadOut(t, "hidden.tar.gz"), 0o600); err != nil {
		t.Fatal(err)
	}
	htab, err := mmiotrace.LoadSymbols(hidden)
	if !errors.Is(err, ksym.ErrHidden) || htab == nil || htab.Len() != 0 {
		t.Errorf("LoadSymbols of the hidden bundle: %v, %v", htab, err)
	}
}
