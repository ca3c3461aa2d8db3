package doctor

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/iotap/iotap/internal/unix"
	"github.com/iotap/iotap/tracefs"
)

// Facility is what the doctor found out about one tracing facility. Its
// NDJSON form (Report.AppendNDJSON, docs/ndjson.md) is a stable interface
// for scripts.
type Facility struct {
	Name      string
	Available bool
	Detail    string
	Remedy    string // "" when available
}

// Report lists every facility, in a fixed order.
type Report struct {
	Kernel     string // the kernel release (uname -r)
	Facilities []Facility
}

// Facility names, in report order.
const (
	NameTracefs      = "tracefs"
	NameDebugfs      = "debugfs"
	NameUsbmon       = "usbmon"
	NameUsbmonBinary = "usbmon-binary"
	NameMmiotrace    = "mmiotrace"
	NameUserEvents   = "user_events"
	NameIntelPT      = "intel_pt"
	NamePerfEvent    = "perf_event"
	NamePrivileges   = "privileges"
)

// System says where to look. The zero value (after Defaults) is this
// machine; tests point Root at a fake tree.
type System struct {
	Root    string // prefix for every path below; "" or "/" for the real system
	Release string // uname -r, to find /boot/config-RELEASE and modules
	EUID    int
	Caps    uint64 // effective capabilities (bit n = capability n)
	CapsErr error
}

// Check probes every facility.
func Check(sys System) Report {
	c := checker{sys: sys}
	c.kcfg = loadKconfig(c.path("/"), sys.Release)
	c.mounts = c.readMounts()
	r := Report{Kernel: sys.Release}
	tfs, tf := c.tracefs()
	r.Facilities = append(r.Facilities,
		tf,
		c.debugfs(),
		c.usbmonText(),
		c.usbmonBinary(),
		c.mmiotrace(tfs),
		c.userEvents(tfs),
		c.intelPT(),
		c.perfEvent(),
		c.privileges(),
	)
	return r
}

type checker struct {
	sys    System
	kcfg   kconfig
	mounts []tracefs.Mount
}

func (c *checker) path(p string) string {
	if c.sys.Root == "" {
		return p
	}
	return filepath.Join(c.sys.Root, p)
}

func (c *checker) exists(p string) bool {
	_, err := os.Stat(c.path(p))
	return err == nil
}

func (c *checker) readMounts() []tracefs.Mount {
	b, err := os.ReadFile(c.path("/proc/self/mountinfo"))
	if err != nil {
		return nil
	}
	m, _ := tracefs.ParseMountinfo(b)
	return m
}

func (c *checker) mountOf(fstype string) string {
	for _, m := range c.mounts {
		if m.FSType == fstype {
			return m.MountPoint
		}
	}
	return ""
}

// configHint explains a missing kernel option from the kernel config.
func (c *checker) configHint(opt string) string {
	switch c.kcfg.state(opt) {
	case "y":
		return opt + "=y in " + c.kcfg.source
	case "m":
		return opt + "=m (module) in " + c.kcfg.source
	case "n":
		return opt + " is not set in " + c.kcfg.source
	}
	return "kernel config not readable (no /proc/config.gz or /boot/config-" + c.sys.Release + ")"
}

func (c *checker) tracefs() (*tracefs.FS, Facility) {
	f := Facility{Name: NameTracefs}
	dir := c.mountOf("tracefs")
	if dir == "" {
		for _, d := range []string{tracefs.DefaultTracefs, tracefs.DefaultDebugfs + "/tracing"} {
			if c.exists(d + "/trace_pipe") {
				dir = d
				break
			}
		}
	}
	if dir == "" {
		f.Detail = "tracefs is not mounted; " + c.configHint("CONFIG_TRACING")
		f.Remedy = "mount -t tracefs nodev " + tracefs.DefaultTracefs
		if c.kcfg.state("CONFIG_TRACING") == "n" {
			f.Remedy = "rebuild the kernel with CONFIG_TRACING=y (CONFIG_FTRACE=y), then " + f.Remedy
		}
		return nil, f
	}
	f.Available = true
	f.Detail = "mounted at " + dir
	return tracefs.New(c.path(dir)), f
}

func (c *checker) debugfsDir() string {
	if d := c.mountOf("debugfs"); d != "" {
		return d
	}
	return ""
}

func (c *checker) debugfs() Facility {
	f := Facility{Name: NameDebugfs}
	if d := c.debugfsDir(); d != "" {
		f.Available, f.Detail = true, "mounted at "+d
		return f
	}
	f.Detail = "debugfs is not mounted; " + c.configHint("CONFIG_DEBUG_FS")
	f.Remedy = "mount -t debugfs none " + tracefs.DefaultDebugfs
	return f
}

// moduleRemedy says how to get a kernel feature that may be a module.
func (c *checker) moduleRemedy(opt, module string) string {
	switch c.kcfg.state(opt) {
	case "m":
		return "modprobe " + module
	case "n":
		return "rebuild the kernel with " + opt + "=y (or =m and modprobe " + module + ")"
	case "y":
		return ""
	}
	if c.hasModule(module) {
		return "modprobe " + module
	}
	return "modprobe " + module + " (needs a kernel with " + opt + ")"
}

// hasModule looks for module.ko* below /lib/modules/RELEASE.
func (c *checker) hasModule(module string) bool {
	if c.sys.Release == "" {
		return false
	}
	b, err := os.ReadFile(c.path("/lib/modules/" + c.sys.Release + "/modules.dep"))
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, _, _ := strings.Cut(sc.Text(), ":")
		base := filepath.Base(name)
		if strings.HasPrefix(base, module+".ko") {
			return true
		}
	}
	return false
}

func (c *checker) usbmonText() Facility {
	f := Facility{Name: NameUsbmon}
	dbg := c.debugfsDir()
	if dbg == "" {
		f.Detail = "usbmon's text files live in debugfs, which is not mounted"
		f.Remedy = "mount -t debugfs none " + tracefs.DefaultDebugfs
		if r := c.moduleRemedy("CONFIG_USB_MON", "usbmon"); r != "" {
			f.Remedy += "; " + r
		}
		return f
	}
	dir := dbg + "/usb/usbmon"
	ents, err := os.ReadDir(c.path(dir))
	if err != nil {
		f.Detail = dir + " is missing: usbmon is not loaded; " + c.configHint("CONFIG_USB_MON")
		f.Remedy = c.moduleRemedy("CONFIG_USB_MON", "usbmon")
		if f.Remedy == "" {
			f.Remedy = "CONFIG_USB_MON=y but " + dir + " is missing: check that debugfs is the kernel's"
		}
		return f
	}
	var buses []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), "u"); ok {
			buses = append(buses, n)
		}
	}
	sort.Slice(buses, func(i, j int) bool { return atoi(buses[i]) < atoi(buses[j]) })
	f.Available = true
	f.Detail = fmt.Sprintf("%s: buses %s (text API, lossy, 32 data bytes; prefer the binary API)", dir, strings.Join(buses, " "))
	return f
}

func (c *checker) usbmonBinary() Facility {
	f := Facility{Name: NameUsbmonBinary}
	if c.exists("/dev/usbmon0") {
		var devs []string
		ents, _ := os.ReadDir(c.path("/dev"))
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "usbmon") {
				devs = append(devs, "/dev/"+e.Name())
			}
		}
		sort.Slice(devs, func(i, j int) bool { return atoi(devs[i][11:]) < atoi(devs[j][11:]) })
		f.Available = true
		f.Detail = strings.Join(devs, " ")
		return f
	}
	if major := c.charMajor("usbmon"); major >= 0 {
		f.Detail = fmt.Sprintf("usbmon is loaded (char major %d) but /dev/usbmon0 is missing", major)
		f.Remedy = fmt.Sprintf("mknod /dev/usbmon0 c %d 0 (or let udev create the nodes)", major)
		return f
	}
	f.Detail = "/dev/usbmon0 is missing: usbmon is not loaded; " + c.configHint("CONFIG_USB_MON")
	f.Remedy = c.moduleRemedy("CONFIG_USB_MON", "usbmon")
	return f
}

// charMajor returns the major number of a character device driver listed
// in /proc/devices, or -1.
func (c *checker) charMajor(name string) int {
	b, err := os.ReadFile(c.path("/proc/devices"))
	if err != nil {
		return -1
	}
	inChar := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "Character devices"):
			inChar = true
		case strings.HasPrefix(line, "Block devices"):
			inChar = false
		case inChar:
			f := strings.Fields(line)
			if len(f) == 2 && f[1] == name {
				return atoi(f[0])
			}
		}
	}
	return -1
}

func (c *checker) mmiotrace(tfs *tracefs.FS) Facility {
	f := Facility{Name: NameMmiotrace}
	if tfs == nil {
		return c.needsTracefs(f, "CONFIG_MMIOTRACE", "rebuild the kernel with CONFIG_MMIOTRACE=y (x86 only; see scripts/lab-kernel.sh)")
	}
	ok, err := tfs.HasTracer("mmiotrace")
	if err != nil {
		f.Detail = "cannot read available_tracers: " + err.Error()
		f.Remedy = "run as root"
		return f
	}
	if !ok {
		f.Detail = "the mmiotrace tracer is not in available_tracers; " + c.configHint("CONFIG_MMIOTRACE")
		f.Remedy = "rebuild the kernel with CONFIG_MMIOTRACE=y (x86 only; see scripts/lab-kernel.sh)"
		return f
	}
	f.Available = true
	cur, _ := tfs.CurrentTracer()
	f.Detail = "tracer mmiotrace available (current tracer: " + cur + ")"
	return f
}

// needsTracefs reports a facility that lives in tracefs while tracefs is
// not mounted: the kernel config still tells whether mounting would help.
func (c *checker) needsTracefs(f Facility, opt, rebuild string) Facility {
	mount := "mount -t tracefs nodev " + tracefs.DefaultTracefs
	f.Detail = "tracefs is not mounted; " + c.configHint(opt)
	switch c.kcfg.state(opt) {
	case "n":
		f.Remedy = rebuild
	case "y":
		f.Remedy = mount
	default:
		f.Remedy = mount + " (if the kernel lacks " + opt + ": " + rebuild + ")"
	}
	return f
}

func (c *checker) userEvents(tfs *tracefs.FS) Facility {
	f := Facility{Name: NameUserEvents}
	if tfs == nil {
		return c.needsTracefs(f, "CONFIG_USER_EVENTS", "rebuild the kernel with CONFIG_USER_EVENTS=y (Linux 6.4 or later)")
	}
	if !tfs.Exists("user_events_data") {
		f.Detail = "user_events_data is missing from " + tfs.Root() + "; " + c.configHint("CONFIG_USER_EVENTS")
		f.Remedy = "rebuild the kernel with CONFIG_USER_EVENTS=y (Linux 6.4 or later)"
		return f
	}
	f.Available = true
	f.Detail = tfs.Root() + "/user_events_data and user_events_status present"
	return f
}

func (c *checker) intelPT() Facility {
	f := Facility{Name: NameIntelPT}
	dir := "/sys/bus/event_source/devices/intel_pt"
	if c.exists(dir) {
		var caps []string
		ents, _ := os.ReadDir(c.path(dir + "/caps"))
		for _, e := range ents {
			b, err := os.ReadFile(c.path(dir + "/caps/" + e.Name()))
			if err == nil && strings.TrimSpace(string(b)) != "0" {
				caps = append(caps, e.Name())
			}
		}
		t, _ := os.ReadFile(c.path(dir + "/type"))
		f.Available = true
		f.Detail = fmt.Sprintf("PMU type %s; caps: %s", strings.TrimSpace(string(t)), strings.Join(caps, " "))
		return f
	}
	vendor, model := c.cpuModel()
	switch {
	case vendor != "" && vendor != "GenuineIntel":
		f.Detail = fmt.Sprintf("Intel PT needs an Intel CPU, this is %s (%s)", model, vendor)
		f.Remedy = "decode traces here (iotap pt dump); capture on an Intel machine (Broadwell or later)"
	case c.cpuFlag("hypervisor") && !c.cpuFlag("intel_pt"):
		f.Detail = fmt.Sprintf("no intel_pt PMU: this %s runs under a hypervisor that does not expose Processor Trace (no intel_pt flag in /proc/cpuinfo)", model)
		f.Remedy = "capture on bare metal, or enable PT pass-through in the hypervisor"
	default:
		f.Detail = "no intel_pt PMU in " + dir + "; " + c.configHint("CONFIG_PERF_EVENTS_INTEL_PT")
		f.Remedy = "needs CPU support (flag intel_pt in /proc/cpuinfo) and CONFIG_PERF_EVENTS_INTEL_PT"
	}
	return f
}

// cpuModel returns vendor_id and model name of the first CPU.
func (c *checker) cpuModel() (vendor, model string) {
	b, err := os.ReadFile(c.path("/proc/cpuinfo"))
	if err != nil {
		return "", ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "vendor_id":
			if vendor == "" {
				vendor = strings.TrimSpace(v)
			}
		case "model name":
			if model == "" {
				model = strings.TrimSpace(v)
			}
		}
		if vendor != "" && model != "" {
			break
		}
	}
	return vendor, model
}

func (c *checker) cpuFlag(flag string) bool {
	b, err := os.ReadFile(c.path("/proc/cpuinfo"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			for _, f := range strings.Fields(v) {
				if f == flag {
					return true
				}
			}
			return false
		}
	}
	return false
}

const capPerfmon, capSysAdmin = 38, 21

func (c *checker) perfEvent() Facility {
	f := Facility{Name: NamePerfEvent}
	b, err := os.ReadFile(c.path("/proc/sys/kernel/perf_event_paranoid"))
	if err != nil {
		f.Detail = "/proc/sys/kernel/perf_event_paranoid is missing; " + c.configHint("CONFIG_PERF_EVENTS")
		f.Remedy = "rebuild the kernel with CONFIG_PERF_EVENTS=y"
		return f
	}
	p := atoi(strings.TrimSpace(string(b)))
	privileged := c.sys.EUID == 0 || c.sys.Caps&(1<<capPerfmon) != 0 || c.sys.Caps&(1<<capSysAdmin) != 0
	f.Detail = fmt.Sprintf("perf_event_paranoid=%d", p)
	switch {
	case privileged:
		f.Available = true
		f.Detail += "; privileged (root or CAP_PERFMON): CPU-wide tracing allowed"
	case p <= 0:
		f.Available = true
		f.Detail += "; CPU-wide tracing allowed for this user"
	case p <= 2:
		f.Available = true
		f.Detail += "; per-thread tracing of own processes only"
		f.Remedy = "for CPU-wide tracing: sysctl kernel.perf_event_paranoid=0, or grant CAP_PERFMON"
	default:
		f.Detail += "; perf_event_open is forbidden for unprivileged users"
		f.Remedy = "sysctl kernel.perf_event_paranoid=2 (or lower), or run as root / with CAP_PERFMON"
	}
	return f
}

func (c *checker) privileges() Facility {
	f := Facility{Name: NamePrivileges}
	if c.sys.EUID == 0 {
		f.Available = true
		f.Detail = "running as root"
		return f
	}
	if c.sys.CapsErr != nil {
		f.Detail = fmt.Sprintf("uid %d; capabilities unknown: %v", c.sys.EUID, c.sys.CapsErr)
	} else {
		f.Detail = fmt.Sprintf("uid %d, effective capabilities %#x", c.sys.EUID, c.sys.Caps)
	}
	if c.sys.Caps&(1<<capSysAdmin) != 0 {
		f.Available = true
		f.Detail += " (CAP_SYS_ADMIN)"
		return f
	}
	f.Remedy = "run iotap as root (sudo): tracefs, debugfs and /dev/usbmonN are root-only by default"
	return f
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// Running is the System of the machine iotap runs on, its files below
// root ("" for /): the kernel release, the effective user and
// capabilities of this process.
func Running(root string) System {
	sys := System{Root: root, EUID: unix.Geteuid()}
	sys.Release, _ = unix.KernelRelease()
	sys.Caps, sys.CapsErr = unix.Capabilities()
	return sys
}
