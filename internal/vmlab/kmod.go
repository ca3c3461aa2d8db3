package vmlab

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// KernelSourceTarball is where Debian's linux-source-6.12 package puts the
// source of the lab kernel (../shared/vm/README.md: the bzImage was built
// from it with kernel.config).
const KernelSourceTarball = "/usr/src/linux-source-6.12.tar.xz"

// kmodRemedy names the packages a module build needs.
const kmodRemedy = "apt-get install linux-source-6.12 make flex bison bc libelf-dev libssl-dev"

// KernelRelease returns the release of a bzImage ("6.12.117"), read from
// the version string its setup header points to (the kernel_version
// field at 0x20e: an offset from 0x200 into the image, as the boot
// protocol defines it).
func KernelRelease(bzImage string) (string, error) {
	f, err := os.Open(bzImage)
	if err != nil {
		return "", fmt.Errorf("vmlab: %w", err)
	}
	defer f.Close()
	var hdr [0x210]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return "", fmt.Errorf("vmlab: %s: setup header: %w", bzImage, err)
	}
	if string(hdr[0x202:0x206]) != "HdrS" {
		return "", fmt.Errorf("vmlab: %s: no bzImage setup header (HdrS at 0x202)", bzImage)
	}
	ptr := int64(binary.LittleEndian.Uint16(hdr[0x20e:])) + 0x200
	var s [128]byte
	n, err := f.ReadAt(s[:], ptr)
	if n == 0 {
		return "", fmt.Errorf("vmlab: %s: kernel version string at %#x: %w", bzImage, ptr, err)
	}
	v := s[:n]
	if i := bytes.IndexAny(v, " \x00"); i > 0 {
		v = v[:i]
	}
	if len(v) == 0 || v[0] < '0' || v[0] > '9' {
		return "", fmt.Errorf("vmlab: %s: no kernel release at %#x", bzImage, ptr)
	}
	return string(v), nil
}

// kbuildTree is the prepared source tree of the lab kernel, made once per
// test process (and kept across processes in the user's cache directory).
var kbuildTree struct {
	once sync.Once
	dir  string
	err  error
	skip string
}

// BuildKernelModule builds the out-of-tree module whose Kbuild file and
// sources are in srcDir against the lab kernel's own source and
// configuration, and returns the host path of NAME.ko (NAME: the base
// name of srcDir's single .c file). The first call prepares the kernel
// tree (unpack linux-source-6.12, kernel.config, make modules_prepare:
// about a minute on an idle 2-core machine) in
// $XDG_CACHE_HOME/iotap/kbuild-RELEASE, kept for later runs; the tree's
// release must equal the bzImage's, so the module loads (the lab kernel
// has no module signing and no modversions). The test is skipped, with
// the packages to install, when the source package or the build tools
// are missing.
func BuildKernelModule(t testing.TB, srcDir string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("vmlab: kernel module build skipped under -short (it builds against the lab kernel's source)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("vmlab: kernel modules are built on Linux")
	}
	kernel, err := kernelPath(Machine{})
	if err != nil {
		t.Skipf("vmlab: %v", err)
	}
	kbuildTree.once.Do(func() {
		kbuildTree.dir, kbuildTree.skip, kbuildTree.err = prepareKernelTree(kernel)
	})
	if kbuildTree.skip != "" {
		t.Skip(kbuildTree.skip)
	}
	if kbuildTree.err != nil {
		t.Fatal(kbuildTree.err)
	}
	srcs, _ := filepath.Glob(filepath.Join(srcDir, "*.c"))
	if len(srcs) != 1 {
		t.Fatalf("vmlab: %s: want one .c file, have %v", srcDir, srcs)
	}
	name := strings.TrimSuffix(filepath.Base(srcs[0]), ".c")
	work := t.TempDir()
	for _, f := range []string{"Kbuild", filepath.Base(srcs[0])} {
		b, err := os.ReadFile(filepath.Join(srcDir, f))
		if err != nil {
			t.Fatalf("vmlab: %v", err)
		}
		if err := os.WriteFile(filepath.Join(work, f), b, 0o600); err != nil {
			t.Fatalf("vmlab: %v", err)
		}
	}
	// KBUILD_MODPOST_WARN: modules_prepare leaves no Module.symvers (that
	// needs the whole kernel built); without modversions the symbols are
	// resolved at load time by name.
	cmd := exec.Command("make", "-s", "-C", kbuildTree.dir, "M="+work, "KBUILD_MODPOST_WARN=1", "modules")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("vmlab: building module %s: %v\n%s", name, err, out.Bytes())
	}
	ko := filepath.Join(work, name+".ko")
	if _, err := os.Stat(ko); err != nil {
		t.Fatalf("vmlab: module %s: %v\n%s", name, err, out.Bytes())
	}
	return ko
}

// kernelPath is the bzImage a Machine boots.
func kernelPath(m Machine) (string, error) {
	if m.Kernel != "" {
		return m.Kernel, nil
	}
	if k := os.Getenv("IOTAP_VM_KERNEL"); k != "" {
		return k, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	k := filepath.Join(root, "..", "shared", "vm", "bzImage")
	if _, err := os.Stat(k); err != nil {
		return "", fmt.Errorf("no lab kernel: %w (set IOTAP_VM_KERNEL)", err)
	}
	return k, nil
}

// prepareKernelTree returns a tree ready for out-of-tree module builds
// for kernel, or why the test must be skipped.
func prepareKernelTree(kernel string) (dir, skip string, err error) {
	release, err := KernelRelease(kernel)
	if err != nil {
		return "", "", err
	}
	config := filepath.Join(filepath.Dir(kernel), "kernel.config")
	if _, err := os.Stat(config); err != nil {
		return "", fmt.Sprintf("vmlab: no kernel.config beside %s: cannot build modules for it", kernel), nil
	}
	if _, err := os.Stat(KernelSourceTarball); err != nil {
		return "", "vmlab: no lab kernel source (" + KernelSourceTarball + "): " + kmodRemedy, nil
	}
	for _, tool := range []string{"make", "flex", "bison", "bc", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", "vmlab: " + tool + " not found: " + kmodRemedy, nil
		}
	}
	cache := os.Getenv("IOTAP_KBUILD_CACHE")
	if cache == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", "", fmt.Errorf("vmlab: %w", err)
		}
		cache = filepath.Join(c, "iotap")
	}
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return "", "", fmt.Errorf("vmlab: %w", err)
	}
	dir = filepath.Join(cache, "kbuild-"+release)
	// Several test processes may prepare at once: one does, the others
	// wait on the lock and find the stamp.
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", "", fmt.Errorf("vmlab: %w", err)
	}
	defer lock.Close()
	if err := lockFile(lock); err != nil {
		return "", "", fmt.Errorf("vmlab: lock %s: %w", lock.Name(), err)
	}
	stamp := filepath.Join(dir, ".iotap-prepared")
	if b, err := os.ReadFile(stamp); err == nil && strings.TrimSpace(string(b)) == release {
		return dir, "", nil
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	os.RemoveAll(dir)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", "", fmt.Errorf("vmlab: %w", err)
	}
	// The tarball holds one top directory, linux-source-6.12/.
	if out, err := exec.Command("tar", "-C", tmp, "--strip-components=1", "-xf", KernelSourceTarball).CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("vmlab: unpacking %s: %v\n%s", KernelSourceTarball, err, out)
	}
	cfg, err := os.ReadFile(config)
	if err != nil {
		return "", "", fmt.Errorf("vmlab: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".config"), cfg, 0o600); err != nil {
		return "", "", fmt.Errorf("vmlab: %w", err)
	}
	for _, args := range [][]string{{"-s", "olddefconfig"}, {"-s", "-j" + strconv.Itoa(runtime.NumCPU()), "modules_prepare"}} {
		cmd := exec.Command("make", append([]string{"-C", tmp}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("vmlab: make %s in the lab kernel source: %v\n%s", args[len(args)-1], err, tail(string(out), 30))
		}
	}
	got, err := os.ReadFile(filepath.Join(tmp, "include", "config", "kernel.release"))
	if err != nil {
		return "", "", fmt.Errorf("vmlab: %w", err)
	}
	if g := strings.TrimSpace(string(got)); g != release {
		return "", fmt.Sprintf("vmlab: %s is %s but the lab kernel is %s: a module built from it would not load", KernelSourceTarball, g, release), nil
	}
	if err := os.WriteFile(filepath.Join(tmp, ".iotap-prepared"), []byte(release+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("vmlab: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", "", fmt.Errorf("vmlab: %w", errors.Join(err, os.RemoveAll(tmp)))
	}
	return dir, "", nil
}
