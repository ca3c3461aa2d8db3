#!/bin/busybox sh
# /init of the vmlab initramfs (see doc.go). It prepares the guest, runs
# /lab/script with "sh -e", records its exit status in /out/.exit and
# powers the machine off.
/bin/busybox mkdir -p /proc /sys /dev /tmp /out /sbin /usr/bin /usr/sbin /root
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root IOTAP_IN_VM=1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
mount -t tmpfs tmpfs /tmp
# Without /out the host gets nothing back: retry the mount for a while,
# then power off before the script starts (the host boots again).
n=0
until mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 out /out; do
	n=$((n + 1))
	if [ "$n" -ge 50 ]; then
		echo "vmlab: cannot mount the 9p share at /out"
		poweroff -f
	fi
	usleep 200000
done
hostname vmlab
ip link set lo up 2>/dev/null
if [ -e /lab/usb ]; then
	lab_wait 120 lab_usb_ready || echo "vmlab: the lab's USB devices did not all enumerate"
fi
cd /tmp
echo "vmlab: script start"
sh -e /lab/script </dev/null
rc=$?
echo "vmlab: script exit $rc"
echo "$rc" >/out/.exit
sync
umount /out 2>/dev/null
poweroff -f
