package doctor

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// tree builds a fake system root from path -> contents ("/dir/" makes a
// directory).
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, data := range files {
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func gz(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

func byName(r Report) map[string]Facility {
	m := map[string]Facility{}
	for _, f := range r.Facilities {
		m[f.Name] = f
	}
	return m
}

const amdCPU = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu hypervisor\n"

// A machine like the project's development host: nothing mounted, a
// kernel without usbmon, mmiotrace and user_events, an AMD CPU.
func TestBareMachine(t *testing.T) {
	root := tree(t, map[string]string{
		"/proc/self/mountinfo":                 "22 27 0:20 / /sys rw - sysfs sysfs rw\n",
		"/proc/config.gz":                      gz("CONFIG_TRACING=y\nCONFIG_DEBUG_FS=y\nCONFIG_PERF_EVENTS=y\n# CONFIG_USB_MON is not set\n"),
		"/proc/cpuinfo":                        amdCPU,
		"/proc/sys/kernel/perf_event_paranoid": "2\n",
		"/proc/devices":                        "Character devices:\n  1 mem\n\nBlock devices:\n  8 sd\n",
	})
	rep := Check(System{Root: root, Release: "6.1.0", EUID: 1000})
	want := []string{NameTracefs, NameDebugfs, NameUsbmon, NameUsbmonBinary, NameMmiotrace, NameUserEvents, NameIntelPT, NamePerfEvent, NamePrivileges}
	if len(rep.Facilities) != len(want) {
		t.Fatalf("got %d facilities, want %d", len(rep.Facilities), len(want))
	}
	for i, f := range rep.Facilities {
		if f.Name != want[i] {
			t.Errorf("facility %d is %q, want %q", i, f.Name, want[i])
		}
	}
	m := byName(rep)
	for _, name := range []string{NameTracefs, NameDebugfs, NameUsbmon, NameUsbmonBinary, NameMmiotrace, NameUserEvents, NameIntelPT, NamePrivileges} {
		f := m[name]
		if f.Available {
			t.Errorf("%s reported available", name)
		}
		if f.Remedy == "" || f.Detail == "" {
			t.Errorf("%s: missing detail or remedy: %+v", name, f)
		}
	}
	checks := map[string][]string{
		NameTracefs:      {"mount -t tracefs nodev /sys/kernel/tracing"},
		NameUsbmonBinary: {"CONFIG_USB_MON is not set", "rebuild the kernel with CONFIG_USB_MON=y"},
		NameMmiotrace:    {"CONFIG_MMIOTRACE is not set", "CONFIG_MMIOTRACE=y"},
		NameUserEvents:   {"CONFIG_USER_EVENTS is not set", "CONFIG_USER_EVENTS=y"},
		NameIntelPT:      {"Intel PT needs an Intel CPU, this is AMD EPYC 7B13"},
		NamePrivileges:   {"run iotap as root"},
	}
	for name, subs := range checks {
		f := m[name]
		for _, s := range subs {
			if !strings.Contains(f.Detail+" "+f.Remedy, s) {
				t.Errorf("%s: %q not in %+v", name, s, f)
			}
		}
	}
	if f := m[NamePerfEvent]; !f.Available || !strings.Contains(f.Detail, "per-thread") || f.Remedy == "" {
		t.Errorf("perf_event with paranoid=2 as a user: %+v", f)
	}
}

// A machine like the lab kernel: everything present.
func TestLabLikeMachine(t *testing.T) {
	root := tree(t, map[string]string{
		"/proc/self/mountinfo": "34 22 0:7 / /sys/kernel/debug rw - debugfs debugfs rw\n" +
			"36 22 0:12 / /sys/kernel/tracing rw - tracefs tracefs rw\n",
		"/sys/kernel/tracing/trace_pipe":                      "",
		"/sys/kernel/tracing/available_tracers":               "mmiotrace nop\n",
		"/sys/kernel/tracing/current_tracer":                  "nop\n",
		"/sys/kernel/tracing/user_events_data":                "",
		"/sys/kernel/debug/usb/usbmon/0u":                     "",
		"/sys/kernel/debug/usb/usbmon/10u":                    "",
		"/sys/kernel/debug/usb/usbmon/2u":                     "",
		"/sys/kernel/debug/usb/usbmon/2s":                     "",
		"/dev/usbmon0":                                        "",
		"/dev/usbmon2":                                        "",
		"/proc/cpuinfo":                                       "vendor_id\t: GenuineIntel\nmodel name\t: Intel Core\nflags\t: fpu intel_pt\n",
		"/sys/bus/event_source/devices/intel_pt/type":         "8\n",
		"/sys/bus/event_source/devices/intel_pt/caps/psb_cyc": "1\n",
		"/sys/bus/event_source/devices/intel_pt/caps/ptwrite": "0\n",
		"/proc/sys/kernel/perf_event_paranoid":                "4\n",
	})
	m := byName(Check(System{Root: root, EUID: 0}))
	for _, name := range []string{NameTracefs, NameDebugfs, NameUsbmon, NameUsbmonBinary, NameMmiotrace, NameUserEvents, NameIntelPT, NamePerfEvent, NamePrivileges} {
		if !m[name].Available {
			t.Errorf("%s not available: %+v", name, m[name])
		}
	}
	if d := m[NameUsbmon].Detail; !strings.Contains(d, "buses 0 2 10") {
		t.Errorf("usbmon buses not listed in order: %q", d)
	}
	if d := m[NameUsbmonBinary].Detail; d != "/dev/usbmon0 /dev/usbmon2" {
		t.Errorf("usbmon-binary detail %q", d)
	}
	if d := m[NameIntelPT].Detail; !strings.Contains(d, "psb_cyc") || strings.Contains(d, "ptwrite") {
		t.Errorf("intel_pt caps: %q", d)
	}
}

func TestUsbmonLoadedWithoutDevNode(t *testing.T) {
	root := tree(t, map[string]string{
		"/proc/devices": "Character devices:\n  1 mem\n243 usbmon\n\nBlock devices:\n243 notthis\n",
	})
	f := byName(Check(System{Root: root}))[NameUsbmonBinary]
	if f.Available || f.Remedy != "mknod /dev/usbmon0 c 243 0 (or let udev create the nodes)" {
		t.Errorf("%+v", f)
	}
}

func TestModuleRemedy(t *testing.T) {
	root := tree(t, map[string]string{
		"/proc/self/mountinfo":           "34 22 0:7 / /sys/kernel/debug rw - debugfs debugfs rw\n",
		"/sys/kernel/debug/":             "",
		"/boot/config-6.1.0":             "CONFIG_USB_MON=m\n",
		"/lib/modules/6.1.0/modules.dep": "kernel/drivers/usb/mon/usbmon.ko.xz:\n",
	})
	f := byName(Check(System{Root: root, Release: "6.1.0"}))[NameUsbmon]
	if f.Available || f.Remedy != "modprobe usbmon" || !strings.Contains(f.Detail, "CONFIG_USB_MON=m (module) in ") {
		t.Errorf("%+v", f)
	}
}

// On the machine running the tests, every facility the doctor calls
// available must really be there, and the reverse.
func TestThisMachineAgreesWithProbes(t *testing.T) {
	m := byName(Check(System{Release: "", EUID: os.Geteuid()}))
	_, err := os.Stat("/dev/usbmon0")
	if got := m[NameUsbmonBinary].Available; got != (err == nil) {
		t.Errorf("usbmon-binary available=%v but stat /dev/usbmon0: %v", got, err)
	}
	for _, f := range m {
		if !f.Available && f.Remedy == "" {
			t.Errorf("%s missing without a remedy: %+v", f.Name, f)
		}
	}
}

// Running describes this process: uname -r's release, id -u's user.
func TestRunning(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel release and capabilities are read on Linux only")
	}
	sys := Running("/x")
	uname, err := exec.Command("uname", "-r").Output()
	if err != nil {
		t.Skipf("uname: %v", err)
	}
	id, err := exec.Command("id", "-u").Output()
	if err != nil {
		t.Skipf("id: %v", err)
	}
	if sys.Root != "/x" || sys.Release != strings.TrimSpace(string(uname)) || strconv.Itoa(sys.EUID) != strings.TrimSpace(string(id)) {
		t.Errorf("%+v: uname -r %s, id -u %s", sys, uname, id)
	}
	if sys.CapsErr == nil && sys.EUID == 0 && sys.Caps == 0 {
		t.Errorf("root without capabilities: %+v", sys)
	}
}
