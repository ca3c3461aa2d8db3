package tracefs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNotMounted is wrapped by errors returned when tracefs or debugfs
// cannot be found.
var ErrNotMounted = errors.New("not mounted")

// Usual mount points, tried when mountinfo names none.
const (
	DefaultTracefs = "/sys/kernel/tracing"
	DefaultDebugfs = "/sys/kernel/debug"
)

// Find locates the tracefs mount of this process's mount namespace.
func Find() (*FS, error) {
	return find("/proc/self/mountinfo")
}

func find(mountinfo string) (*FS, error) {
	if dir, err := mountOf(mountinfo, "tracefs"); err == nil {
		return New(dir), nil
	}
	for _, dir := range []string{DefaultTracefs, filepath.Join(DefaultDebugfs, "tracing")} {
		if isTracefs(dir) {
			return New(dir), nil
		}
	}
	return nil, fmt.Errorf("tracefs: %w: mount it with 'mount -t tracefs nodev %s' (CONFIG_TRACING)", ErrNotMounted, DefaultTracefs)
}

// FindDebugfs returns the debugfs mount point (where usbmon's text files
// live).
func FindDebugfs() (string, error) {
	return findDebugfs("/proc/self/mountinfo")
}

func findDebugfs(mountinfo string) (string, error) {
	if dir, err := mountOf(mountinfo, "debugfs"); err == nil {
		return dir, nil
	}
	if st, err := os.Stat(filepath.Join(DefaultDebugfs, "tracing")); err == nil && st.IsDir() {
		return DefaultDebugfs, nil
	}
	return "", fmt.Errorf("debugfs: %w: mount it with 'mount -t debugfs none %s' (CONFIG_DEBUG_FS)", ErrNotMounted, DefaultDebugfs)
}

// mountOf returns the first mount point of fstype listed in mountinfo.
func mountOf(mountinfo, fstype string) (string, error) {
	data, err := os.ReadFile(mountinfo)
	if err != nil {
		return "", err
	}
	mounts, err := ParseMountinfo(data)
	if err != nil {
		return "", err
	}
	for _, m := range mounts {
		if m.FSType == fstype {
			return m.MountPoint, nil
		}
	}
	return "", fmt.Errorf("no %s in %s", fstype, mountinfo)
}

// isTracefs reports whether dir looks like a tracefs root.
func isTracefs(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "trace_pipe"))
	return err == nil
}
