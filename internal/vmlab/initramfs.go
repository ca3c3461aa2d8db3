package vmlab

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io/fs"
	"os"
	"sort"
)

//go:embed init.sh
var initScript []byte

//go:embed lab_monitor.sh
var labMonitorScript []byte

//go:embed lab_wait.sh
var labWaitScript []byte

//go:embed lab_usb_ready.sh
var labUSBReadyScript []byte

// initramfsSpec is what goes into the guest's initramfs.
type initramfsSpec struct {
	busybox  string            // host path of a static busybox
	binaries map[string]string // guest path -> host path, mode 0755
	files    map[string][]byte // guest path -> content
	script   string            // becomes /lab/script
	usb      bool              // wait for the lab's USB devices before the script
}

// buildInitramfs returns the gzip-compressed newc archive of spec.
func buildInitramfs(spec initramfsSpec) ([]byte, error) {
	entries := []cpioEntry{
		{Name: "/init", Mode: 0o755, Data: initScript},
		{Name: "/bin/lab_monitor", Mode: 0o755, Data: labMonitorScript},
		{Name: "/bin/lab_wait", Mode: 0o755, Data: labWaitScript},
		{Name: "/bin/lab_usb_ready", Mode: 0o755, Data: labUSBReadyScript},
		{Name: "/lab/script", Mode: 0o644, Data: []byte(spec.script)},
		{Name: "/dev/console", Mode: fs.ModeDevice | fs.ModeCharDevice | 0o600, Major: 5, Minor: 1},
		{Name: "/dev/null", Mode: fs.ModeDevice | fs.ModeCharDevice | 0o666, Major: 1, Minor: 3},
	}
	if spec.usb {
		entries = append(entries, cpioEntry{Name: "/lab/usb", Mode: 0o644})
	}
	bins := map[string]string{"/bin/busybox": spec.busybox}
	for g, h := range spec.binaries {
		bins[g] = h
	}
	for _, g := range sortedKeys(bins) {
		b, err := os.ReadFile(bins[g])
		if err != nil {
			return nil, fmt.Errorf("vmlab: binary for %s: %w", g, err)
		}
		entries = append(entries, cpioEntry{Name: g, Mode: 0o755, Data: b})
	}
	for _, g := range sortedKeys(spec.files) {
		b := spec.files[g]
		mode := fs.FileMode(0o644)
		if bytes.HasPrefix(b, []byte("#!")) {
			mode = 0o755
		}
		entries = append(entries, cpioEntry{Name: g, Mode: mode, Data: b})
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if err := writeCPIO(zw, entries); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
