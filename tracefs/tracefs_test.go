package tracefs

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseMountinfo(t *testing.T) {
	data := []byte(`22 27 0:20 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
34 22 0:7 / /sys/kernel/debug rw,nosuid,nodev,noexec,relatime shared:15 - debugfs debugfs rw
36 22 0:12 / /sys/kernel/tracing rw,nosuid,nodev,noexec,relatime shared:17 - tracefs tracefs rw
40 27 0:30 / /mnt/with\040space rw - tmpfs none rw
41 27 0:31 / /mnt/noopt rw - tmpfs a b
`)
	got, err := ParseMountinfo(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{
		{"/sys", "sysfs", "sysfs"},
		{"/sys/kernel/debug", "debugfs", "debugfs"},
		{"/sys/kernel/tracing", "tracefs", "tracefs"},
		{"/mnt/with space", "tmpfs", "none"},
		{"/mnt/noopt", "tmpfs", "a"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestParseMountinfoErrors(t *testing.T) {
	for _, in := range []string{
		"garbage\n",
		"1 2 3 4 /x opts\n",           // no separator
		"1 2 3:4 / /x rw shared - \n", // nothing after separator
	} {
		if _, err := ParseMountinfo([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	_, err := ParseMountinfo([]byte("22 27 0:20 / /sys rw - sysfs sysfs rw\nbad line\n"))
	if err == nil || err.Error() != `mountinfo line 2: malformed: "bad line"` {
		t.Fatalf("error %v does not name line 2", err)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFindFromMountinfo(t *testing.T) {
	dir := t.TempDir()
	mi := filepath.Join(dir, "mountinfo")
	writeFile(t, mi, "36 22 0:12 / /custom/trace rw - tracefs tracefs rw\n37 22 0:13 / /custom/dbg rw - debugfs debugfs rw\n")
	fs, err := find(mi)
	if err != nil {
		t.Fatal(err)
	}
	if fs.Root() != "/custom/trace" {
		t.Errorf("root %q", fs.Root())
	}
	d, err := findDebugfs(mi)
	if err != nil || d != "/custom/dbg" {
		t.Errorf("debugfs %q, %v", d, err)
	}
}

func TestFindMissing(t *testing.T) {
	dir := t.TempDir()
	mi := filepath.Join(dir, "mountinfo")
	writeFile(t, mi, "22 27 0:20 / /sys rw - sysfs sysfs rw\n")
	if isTracefs(DefaultTracefs) || isTracefs("/sys/kernel/debug/tracing") {
		t.Skip("this machine has tracefs at a default path; the fallback would find it")
	}
	_, err := find(mi)
	if !errors.Is(err, ErrNotMounted) {
		t.Fatalf("got %v, want ErrNotMounted", err)
	}
}

func TestPathRefusesEscapes(t *testing.T) {
	fs := New("/sys/kernel/tracing")
	for _, bad := range []string{"", "..", "../etc/passwd", "a/../../b", "/etc/passwd", "a//b", "a/./b", "x\x00y"} {
		if p, err := fs.Path("events", bad); !errors.Is(err, ErrBadPath) {
			t.Errorf("Path(%q) = %q, %v; want ErrBadPath", bad, p, err)
		}
	}
	p, err := fs.Path("events", "user_events/foo", "enable")
	if err != nil || p != "/sys/kernel/tracing/events/user_events/foo/enable" {
		t.Errorf("got %q, %v", p, err)
	}
}

// fakeTracefs builds a directory with the files a kernel would show.
func fakeTracefs(t *testing.T) *FS {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "available_tracers"), "mmiotrace blk function nop\n")
	writeFile(t, filepath.Join(dir, "current_tracer"), "nop\n")
	writeFile(t, filepath.Join(dir, "buffer_size_kb"), "7 (expanded: 1408)\n")
	writeFile(t, filepath.Join(dir, "trace_clock"), "[local] global counter uptime perf mono mono_raw boot\n")
	writeFile(t, filepath.Join(dir, "tracing_on"), "1\n")
	writeFile(t, filepath.Join(dir, "trace_marker"), "")
	writeFile(t, filepath.Join(dir, "per_cpu/cpu0/stats"), "entries: 10\noverrun: 2\ncommit overrun: 0\nbytes: 4000\noldest event ts:  5234.229061\nnow ts:  5239.662563\ndropped events: 3\nread events: 7\n")
	writeFile(t, filepath.Join(dir, "per_cpu/cpu1/stats"), "entries: 0\noverrun: 5\ncommit overrun: 1\nbytes: 0\noldest event ts:     0.000000\nnow ts:  5239.662563\ndropped events: 0\nread events: 0\n")
	writeFile(t, filepath.Join(dir, "events/user_events/test/enable"), "0*\n")
	writeFile(t, filepath.Join(dir, "events/user_events/test/format"), "name: test\n")
	return New(dir)
}

func TestFakeTracefs(t *testing.T) {
	fs := fakeTracefs(t)
	if ok, err := fs.HasTracer("mmiotrace"); !ok || err != nil {
		t.Errorf("HasTracer(mmiotrace) = %v, %v", ok, err)
	}
	if ok, _ := fs.HasTracer("mmio"); ok {
		t.Error("HasTracer(mmio) matched a prefix")
	}
	if err := fs.SetTracer("mmiotrace"); err != nil {
		t.Fatal(err)
	}
	if cur, err := fs.CurrentTracer(); err != nil || cur != "mmiotrace" {
		t.Errorf("CurrentTracer = %q, %v", cur, err)
	}
	if err := fs.SetTracer("../x"); err == nil {
		t.Error("SetTracer accepted a path")
	}
	if kb, err := fs.BufferSizeKB(); err != nil || kb != 1408 {
		t.Errorf("BufferSizeKB = %d, %v", kb, err)
	}
	if err := fs.SetBufferSizeKB(4096); err != nil {
		t.Fatal(err)
	}
	if kb, err := fs.BufferSizeKB(); err != nil || kb != 4096 {
		t.Errorf("after set: BufferSizeKB = %d, %v", kb, err)
	}
	if err := fs.SetBufferSizeKB(0); err == nil {
		t.Error("SetBufferSizeKB(0) accepted")
	}
	if c, err := fs.TraceClock(); err != nil || c != "local" {
		t.Errorf("TraceClock = %q, %v", c, err)
	}
	if err := fs.WriteMarker("hello"); err != nil {
		t.Fatal(err)
	}
	if b, _ := fs.ReadFile("trace_marker"); string(b) != "hello" {
		t.Errorf("marker file holds %q", b)
	}
	s, err := fs.CPUStats(0)
	if err != nil {
		t.Fatal(err)
	}
	if s.Entries != 10 || s.Overrun != 2 || s.Dropped != 3 || s.ReadEvents != 7 || s.Lost() != 5 || s.NowTS != "5239.662563" {
		t.Errorf("CPUStats(0) = %+v", s)
	}
	if cpus, err := fs.CPUs(); err != nil || !reflect.DeepEqual(cpus, []int{0, 1}) {
		t.Errorf("CPUs = %v, %v", cpus, err)
	}
	if lost, err := fs.TotalLost(); err != nil || lost != 11 {
		t.Errorf("TotalLost = %d, %v", lost, err)
	}
	if on, err := fs.EventEnabled("user_events", "test"); err != nil || on {
		t.Errorf("EventEnabled = %v, %v", on, err)
	}
	if err := fs.EnableEvent("user_events", "test", true); err != nil {
		t.Fatal(err)
	}
	if on, err := fs.EventEnabled("user_events", "test"); err != nil || !on {
		t.Errorf("after enable: EventEnabled = %v, %v", on, err)
	}
	if _, err := fs.EventFormat("user_events", "../../x"); !errors.Is(err, ErrBadPath) {
		t.Errorf("EventFormat with traversal: %v", err)
	}
	for _, bad := range []string{".", "..", ".hidden", "a/b", "a b", ""} {
		if err := fs.EnableEvent("user_events", bad, true); !errors.Is(err, ErrBadPath) {
			t.Errorf("EnableEvent(%q): %v, want ErrBadPath", bad, err)
		}
	}
	writeFile(t, filepath.Join(fs.Root(), "events/user_events/multi.1a/enable"), "0\n")
	if err := fs.EnableEvent("user_events", "multi.1a", true); err != nil {
		t.Errorf("multi-format name refused: %v", err)
	}
	if err := fs.EnableEvent("user_events", "nosuch", true); err == nil {
		t.Error("enabling a missing event succeeded (WriteFile must not create files)")
	}
}

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		ok   bool
	}{
		{"0\n", []int{0}, true},
		{"0-3", []int{0, 1, 2, 3}, true},
		{"0-1,4,6-7", []int{0, 1, 4, 6, 7}, true},
		{"", nil, true},
		{"3-1", nil, false},
		{"a", nil, false},
		{"-1", nil, false},
		{"0-2,5,7-8", []int{0, 1, 2, 5, 7, 8}, true},
		{" 1, 3 ", []int{1, 3}, true},
		{"0-99999", nil, false},
		{"1,,2", nil, false},
	} {
		got, err := ParseCPUList(tc.in)
		if (err == nil) != tc.ok || (tc.ok && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("ParseCPUList(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestParseCPUStatsError(t *testing.T) {
	if _, err := ParseCPUStats([]byte("entries: 1\noverrun: x\n")); err == nil || err.Error() != `stats line 2: overrun: strconv.ParseUint: parsing "x": invalid syntax` {
		t.Fatalf("got %v", err)
	}
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add([]byte("36 22 0:12 / /sys/kernel/tracing rw - tracefs tracefs rw\n"))
	f.Add([]byte("1 2 3 4 5 6 - \\0401 \\777\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := ParseMountinfo(data)
		if err == nil {
			for _, m := range ms {
				if m.FSType == "" {
					t.Fatalf("empty fstype from %q", data)
				}
			}
		}
	})
}

func FuzzParseCPUStats(f *testing.F) {
	f.Add([]byte("entries: 10\noverrun: 2\ncommit overrun: 0\nbytes: 4000\ndropped events: 3\nread events: 7\n"))
	f.Add([]byte("overrun: x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseCPUStats(data)
		if err != nil && !strings.HasPrefix(err.Error(), "stats line ") {
			t.Fatalf("error without its line: %v", err)
		}
		_ = s.Lost()
	})
}

func FuzzParseCPUList(f *testing.F) {
	f.Add("0-3,5,7-8")
	f.Add("3-1")
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUList(s)
		if err != nil {
			return
		}
		for i := 1; i < len(cpus); i++ {
			if cpus[i] < 0 {
				t.Fatalf("negative cpu from %q", s)
			}
		}
	})
}
