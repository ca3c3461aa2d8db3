#!/bin/bash
# lab-kernel.sh [--config-only] OUTPUT: rebuild the lab kernel (a bzImage with everything the
# iotap lab needs built in: usbmon, mmiotrace, user_events, xHCI/EHCI, USB
# storage and HID, e1000, virtio and 9p) from Debian's linux-source-6.12
# package, and write it to OUTPUT (e.g. ../shared/vm/bzImage, or any path you
# then give to the lab as IOTAP_VM_KERNEL).
#
# The configuration is `make defconfig && make kvm_guest.config`, then the
# options of config.fragment (default: ../shared/vm/config.fragment next to
# the repository; override with IOTAP_VM_FRAGMENT), then
# `make olddefconfig`. The script checks that every option of the fragment
# survived. About 15 minutes on 2 cores. With --config-only it stops after
# the configuration and writes the .config to OUTPUT (a minute; compare it
# with ../shared/vm/kernel.config).
#
# Needs: apt-get install linux-source-6.12 build-essential bc bison flex \
#        libelf-dev libssl-dev
set -euo pipefail

config_only=0
if [ "${1:-}" = --config-only ]; then
	config_only=1
	shift
fi
if [ $# -ne 1 ]; then
	echo "usage: $0 [--config-only] OUTPUT" >&2
	exit 2
fi
out=$1
case $out in /*) ;; *) out=$PWD/$out ;; esac

repo=$(cd "$(dirname "$0")/.." && pwd)
fragment=${IOTAP_VM_FRAGMENT:-$repo/../shared/vm/config.fragment}
tarball=${IOTAP_KERNEL_SOURCE:-/usr/src/linux-source-6.12.tar.xz}

missing=()
[ -r "$tarball" ] || missing+=(linux-source-6.12)
for tool in gcc make bc bison flex; do
	command -v "$tool" >/dev/null || missing+=("$tool")
done
[ -e /usr/include/libelf.h ] || missing+=(libelf-dev)
[ -e /usr/include/openssl/ssl.h ] || missing+=(libssl-dev)
if [ ${#missing[@]} -gt 0 ]; then
	echo "lab-kernel.sh: missing: ${missing[*]}" >&2
	echo "  apt-get install linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev" >&2
	exit 1
fi
if [ ! -r "$fragment" ]; then
	echo "lab-kernel.sh: no config fragment at $fragment (set IOTAP_VM_FRAGMENT)" >&2
	exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/lab-kernel.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "lab-kernel.sh: unpacking $tarball into $work" >&2
tar -C "$work" -xf "$tarball"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n1)
cd "$src"

make -s defconfig
make -s kvm_guest.config
# merge_config.sh -m merges the fragment into .config without running
# olddefconfig itself; we run it next.
scripts/kconfig/merge_config.sh -m .config "$fragment" >/dev/null
make -s olddefconfig

# Every option of the fragment must have survived olddefconfig (a missing
# dependency silently drops an option).
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*)
		if ! grep -qxF "$line" .config; then
			echo "lab-kernel.sh: $line did not survive olddefconfig" >&2
			bad=1
		fi
		;;
	"# CONFIG_"*" is not set")
		opt=${line#"# "}
		opt=${opt%" is not set"}
		if grep -q "^$opt=" .config; then
			echo "lab-kernel.sh: $opt is still set" >&2
			bad=1
		fi
		;;
	esac
done <"$fragment"
[ $bad = 0 ] || exit 1
if [ $config_only = 1 ]; then
	mkdir -p "$(dirname "$out")"
	cp .config "$out"
	echo "lab-kernel.sh: wrote the configuration to $out" >&2
	exit 0
fi

echo "lab-kernel.sh: building bzImage with $(nproc) jobs (about 15 minutes on 2 cores)" >&2
make -s -j"$(nproc)" bzImage
mkdir -p "$(dirname "$out")"
cp arch/x86/boot/bzImage "$out"
cp .config "$out.config"
echo "lab-kernel.sh: wrote $out (configuration in $out.config)" >&2
