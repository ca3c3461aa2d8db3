#!/bin/sh
# lab_monitor "HMP command": ask the host to run a QEMU monitor command
# (device_del, device_add, info usb...), print its output and exit 1 if the
# monitor reported an error. The request travels as a file in /out/.vmlab,
# which the host polls; the host answers with .txt and .done files.
[ $# -gt 0 ] || { echo "usage: lab_monitor \"monitor command\"" >&2; exit 2; }
d=/out/.vmlab
mkdir -p "$d"
seq=$(($(cat /tmp/.lab_monitor_seq 2>/dev/null || echo 0) + 1))
echo "$seq" >/tmp/.lab_monitor_seq
id="$$-$seq"
printf '%s\n' "$*" >"$d/$id.tmp"
mv "$d/$id.tmp" "$d/$id.req"
n=0
while [ ! -e "$d/$id.done" ]; do
	usleep 20000
	n=$((n + 1))
	if [ "$n" -gt 3000 ]; then
		echo "lab_monitor: no answer from the host for: $*" >&2
		exit 1
	fi
done
cat "$d/$id.txt"
exit "$(cat "$d/$id.done")"
