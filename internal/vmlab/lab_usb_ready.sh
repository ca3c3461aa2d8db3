#!/bin/sh
# lab_usb_ready: succeed when the lab's USB devices (Machine.USB) have
# enumerated: keyboard, tablet, both storage devices and their sd disks.
p=$(cat /sys/bus/usb/devices/*/product 2>/dev/null)
echo "$p" | grep -qx "QEMU USB Keyboard" || exit 1
echo "$p" | grep -qx "QEMU USB Tablet" || exit 1
[ "$(echo "$p" | grep -cx "QEMU USB HARDDRIVE")" = 2 ] || exit 1
[ "$(ls /sys/block | grep -c '^sd')" = 2 ] || exit 1
for b in /sys/block/sd*; do
	[ "$(cat $b/size)" -gt 0 ] || exit 1
done
