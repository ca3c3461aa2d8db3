package vmlab

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// requirements skips t unless everything a lab run needs is present.
func requirements(t testing.TB, m Machine) (qemu, kernel, busybox string) {
	t.Helper()
	if testing.Short() {
		t.Skip("vmlab: lab test skipped under -short (it boots a QEMU guest)")
	}
	qemu, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		t.Skip("vmlab: qemu-system-x86_64 not found: apt-get install qemu-system-x86")
	}
	kernel = m.Kernel
	if kernel == "" {
		kernel = os.Getenv("IOTAP_VM_KERNEL")
	}
	if kernel == "" {
		kernel = filepath.Join(filepath.Dir(moduleRoot(t)), "shared", "vm", "bzImage")
	}
	if _, err := os.Stat(kernel); err != nil {
		t.Skipf("vmlab: lab kernel %s not found: set IOTAP_VM_KERNEL to a bzImage, or build one with scripts/lab-kernel.sh %s", kernel, kernel)
	}
	busybox = os.Getenv("IOTAP_VM_BUSYBOX")
	if busybox == "" {
		busybox = "/bin/busybox"
	}
	if err := checkStatic(busybox); err != nil {
		t.Skipf("vmlab: %v: apt-get install busybox-static (or set IOTAP_VM_BUSYBOX to a static busybox)", err)
	}
	return qemu, kernel, busybox
}

// checkGuestPaths refuses files placed where the guest's init mounts
// something over them.
func checkGuestPaths(m Machine) error {
	var paths []string
	for p := range m.Files {
		paths = append(paths, p)
	}
	for p := range m.Binaries {
		paths = append(paths, p)
	}
	for _, p := range paths {
		clean := path.Clean("/" + p)
		for _, mnt := range []string{"/tmp", "/out", "/proc", "/sys", "/dev"} {
			if clean == mnt || strings.HasPrefix(clean, mnt+"/") {
				return fmt.Errorf("vmlab: cannot put %s into the guest: init mounts a file system on %s", p, mnt)
			}
		}
	}
	return nil
}

// checkStatic returns an error unless path is a statically linked ELF
// executable (no program interpreter).
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("no static busybox at %s (%v)", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked", path)
		}
	}
	return nil
}
