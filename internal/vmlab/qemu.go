package vmlab

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
)

// bootArgs is the start of every guest's kernel command line.
// no_timer_check: under TCG on a loaded host the IO-APIC timer check
// (a few jiffies of busy waiting for timer interrupts) sometimes sees none
// and the kernel panics with "IO-APIC + timer doesn't work!"; the check
// only matters on broken real hardware.
const bootArgs = "console=ttyS0 quiet panic=-1 oops=panic no_timer_check usb-storage.delay_use=0"

// qemuArgs is the QEMU command line of m.
func qemuArgs(m Machine, kernel, initrd, work, out, qmpSock, accel string) ([]string, error) {
	mem := m.MemoryMB
	if mem == 0 {
		mem = DefaultMemoryMB
	}
	cpus := m.CPUs
	if cpus == 0 {
		cpus = 1
	}
	cpu, accelOpt := "max", accel
	if accel == "kvm" {
		cpu = "host"
	}
	if accel == "tcg" && cpus > 1 {
		// Multi-threaded TCG runs each vCPU in its own host thread; a
		// vCPU then sometimes executes the int3 of a text_poke_bp (a
		// static key or tracepoint being enabled on another vCPU) and the
		// guest oopses in __schedule. One thread for all vCPUs switches
		// between them only at translation block ends.
		accelOpt = "tcg,thread=single"
	}
	args := []string{
		"-nodefaults", "-no-user-config", "-machine", "pc",
		"-accel", accelOpt, "-cpu", cpu,
		"-m", strconv.Itoa(mem), "-smp", strconv.Itoa(cpus),
		"-display", "none", "-serial", "stdio", "-no-reboot",
		"-kernel", kernel, "-initrd", initrd,
		"-append", strings.TrimSpace(bootArgs + " " + m.KernelArgs),
		"-qmp", "unix:" + qmpSock + ",server=on,wait=off",
		"-fsdev", "local,id=out,path=" + out + ",security_model=none",
		"-device", "virtio-9p-pci,fsdev=out,mount_tag=out,addr=06.0",
	}
	if m.NIC {
		p1, p2, err := freeUDPPorts()
		if err != nil {
			return nil, err
		}
		args = append(args,
			"-netdev", fmt.Sprintf("socket,id=n0,udp=127.0.0.1:%d,localaddr=127.0.0.1:%d", p1, p2),
			"-device", "e1000,netdev=n0,id=nic0,addr=03.0,mac=52:54:00:12:34:56")
	}
	if m.USB {
		args = append(args,
			"-device", "qemu-xhci,id=xhci,addr=04.0",
			"-drive", "if=none,id=d0,format=raw,file="+filepath.Join(work, "d0.img"),
			"-device", "usb-storage,id=stor0,bus=xhci.0,drive=d0",
			"-device", "usb-kbd,id=kbd0,bus=xhci.0",
			"-device", "usb-tablet,id=tablet0,bus=xhci.0",
			"-device", "usb-ehci,id=ehci,addr=05.0",
			"-drive", "if=none,id=d1,format=raw,file="+filepath.Join(work, "d1.img"),
			"-device", "usb-storage,id=stor1,bus=ehci.0,drive=d1",
		)
	}
	return append(args, m.ExtraQEMUArgs...), nil
}

// freeUDPPorts returns two UDP ports on 127.0.0.1 that were free a moment
// ago: the e1000's peer port and its own.
func freeUDPPorts() (int, int, error) {
	var ports [2]int
	var conns []net.PacketConn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range ports {
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			return 0, 0, fmt.Errorf("vmlab: pick a UDP port: %w", err)
		}
		conns = append(conns, c)
		ports[i] = c.LocalAddr().(*net.UDPAddr).Port
	}
	return ports[0], ports[1], nil
}
