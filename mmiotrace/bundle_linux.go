//go:build linux

package mmiotrace

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/ksym"
	"github.com/klauspost/compress/gzip"
)

// WriteBundle writes the report bundle the mmiotrace documentation asks
// for as a tar.gz at path (mode 0600): the log, lspci -vvv (or, without
// lspci, the same facts from sysfs), dmesg and /proc/bus/pci/devices,
// plus /proc/kallsyms and /proc/modules (kallsyms.txt, modules.txt) that
// name the PC of each access (see package ksym).
func WriteBundle(path, logPath string, sys Sysfs) error {
	return WriteBundleWarn(path, logPath, sys, nil)
}

// WriteBundleWarn is WriteBundle that reports problems that do not stop
// the bundle through warn (nil: ignored): kallsyms whose addresses the
// kernel hid (kptr_restrict) or an unreadable /proc file.
func WriteBundleWarn(path, logPath string, sys Sysfs, warn func(string)) error {
	if warn == nil {
		warn = func(string) {}
	}
	if sys.Root == "" {
		sys = DefaultSysfs
	}
	var in outfile.Inputs
	in.Add(logPath)
	f, err := outfile.Create(path, outfile.Options{Inputs: &in})
	if err != nil {
		return fmt.Errorf("mmiotrace: bundle: %w", err)
	}
	defer f.Abort()
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	now := time.Now()
	add := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), ModTime: now, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	err = func() error {
		lf, err := os.Open(logPath)
		if err != nil {
			return err
		}
		defer lf.Close()
		fi, err := lf.Stat()
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.Base(logPath), Mode: 0o600, Size: fi.Size(), ModTime: fi.ModTime(), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := io.CopyN(tw, lf, fi.Size()); err != nil {
			return err
		}
		if err := add("lspci.txt", lspciInfo(sys)); err != nil {
			return err
		}
		if err := add("dmesg.txt", runOrExplain("dmesg")); err != nil {
			return err
		}
		devs, derr := os.ReadFile("/proc/bus/pci/devices")
		if derr != nil {
			devs = []byte(fmt.Sprintf("unavailable: %v\n", derr))
		}
		if err := add("pci-devices.txt", devs); err != nil {
			return err
		}
		for _, p := range []struct{ file, name string }{{ProcKallsyms, BundleKallsyms}, {ProcModules, BundleModules}} {
			data, err := os.ReadFile(p.file)
			if err != nil {
				// Left out: a reader finds no file rather than a
				// message it would have to tell from symbols.
				warn(fmt.Sprintf("%s not saved in the bundle: %v; accesses will show bare PCs", p.file, err))
				continue
			}
			if _, err := ksym.Load(bytes.NewReader(data), nil); err != nil && p.name == BundleKallsyms {
				warn(fmt.Sprintf("%s: %v; the bundle keeps it, but accesses will show bare PCs", p.file, err))
			}
			if err := add(p.name, data); err != nil {
				return err
			}
		}
		return nil
	}()
	if cerr := tw.Close(); err == nil {
		err = cerr
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.Commit()
	}
	if err != nil {
		return fmt.Errorf("mmiotrace: bundle %s: %w", path, err)
	}
	return nil
}

func runOrExplain(name string, args ...string) []byte {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return append(out, fmt.Sprintf("\n%s %s failed: %v\n", name, strings.Join(args, " "), err)...)
	}
	return out
}

// lspciInfo runs lspci -vvv, or describes the devices from sysfs when
// lspci is not installed.
func lspciInfo(sys Sysfs) []byte {
	if _, err := exec.LookPath("lspci"); err == nil {
		return runOrExplain("lspci", "-vvv")
	}
	var b bytes.Buffer
	b.WriteString("# lspci not found; PCI devices from sysfs\n")
	dir := filepath.Join(sys.Root, "bus", "pci", "devices")
	ents, err := os.ReadDir(dir)
	if err != nil {
		fmt.Fprintf(&b, "unavailable: %v\n", err)
		return b.Bytes()
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		a, err := ParsePCIAddr(n)
		if err != nil {
			continue
		}
		rd := func(f string) string {
			v, err := os.ReadFile(filepath.Join(sys.DeviceDir(a), f))
			if err != nil {
				return "?"
			}
			return strings.TrimSpace(string(v))
		}
		drv, _ := sys.Driver(a)
		fmt.Fprintf(&b, "%s vendor %s device %s class %s subsystem %s:%s irq %s driver %s\n",
			a, rd("vendor"), rd("device"), rd("class"), rd("subsystem_vendor"), rd("subsystem_device"), rd("irq"), cmpOr(drv, "-"))
		for i, l := range strings.Split(rd("resource"), "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[0] != "0x0000000000000000" {
				fmt.Fprintf(&b, "\tresource %d: start %s end %s flags %s\n", i, f[0], f[1], f[2])
			}
		}
	}
	return b.Bytes()
}
