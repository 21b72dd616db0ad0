#!/bin/bash
# Creates, once, the Debian 13 (trixie) root filesystem of the VM suite's second lane: kernel
# 6.12, CRIU 4.1, podman 5.4, runc, crun, from Debian's archive, with debootstrap. The VM boots
# it with its own kernel (`vng --root DIR`); gpuwatch and the tests, built on Debian 12, run in
# it unchanged.
#
# usage: vmtests/lanes/mkroot-debian13.sh [DIR]     (root; DIR default $GPUWATCH_VM_ROOTS/debian13)
#   env GPUWATCH_VM_ROOTS  where lane roots are kept (default /var/lib/gpuwatch/vm-roots)
#   env DEBIAN_MIRROR      archive to use (default http://deb.debian.org/debian)
# Idempotent: a root whose stamp matches this script's package list is kept as it is. A root
# being made is built in DIR.new and renamed when complete, so an interrupted run leaves no
# half root behind under DIR (the next run starts DIR.new again). About 4-10 minutes, 1.5 GB.
set -euo pipefail
die() { echo "mkroot-debian13: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap)"
roots=${GPUWATCH_VM_ROOTS:-/var/lib/gpuwatch/vm-roots}
dir=${1:-$roots/debian13}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

# What the suites run inside: CRIU and the runtimes; the kernel and its headers (the test
# modules are built against them, in the root); what gpuwatch and the tests link (libbpf,
# libelf, libdrm, libdrm_intel, libstdc++) and the tools the guest scripts call (modetest:
# libdrm-tests; gst-launch-1.0 with videotestsrc and kmssink: gstreamer1.0-*).
pkgs=(
	criu libcriu2 podman runc crun conmon catatonit iptables
	linux-image-amd64 linux-headers-amd64 make gcc
	kmod busybox-static procps psmisc iproute2 util-linux python3 strace zstd
	libbpf1 libelf1t64 zlib1g libdrm2 libdrm-intel1 libstdc++6 libdrm-tests
)
# installed with apt in the new root afterwards: debootstrap's own resolver does not follow
# virtual packages and alternatives (dbus-session-bus), which gstreamer's plugins pull in
apt_pkgs=(gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-bad)
stamp_text="gpuwatch vm root: debian13 trixie ${pkgs[*]} ${apt_pkgs[*]}"
if [ -f "$dir/.gpuwatch-root" ] && [ "$(cat "$dir/.gpuwatch-root")" = "$stamp_text" ]; then
	echo "mkroot-debian13: $dir is ready"
	exit 0
fi
command -v debootstrap >/dev/null || die "debootstrap not found: apt-get install debootstrap"
[ -f /usr/share/debootstrap/scripts/trixie ] || die "this debootstrap does not know trixie: apt-get install --only-upgrade debootstrap"

new=$dir.new
if [ -d "$new" ]; then
	# a previous run was interrupted: its mounts first, then the half root
	for m in proc sys dev; do mountpoint -q "$new/$m" && umount -l "$new/$m"; done
	rm -rf --one-file-system "$new"
fi
mkdir -p "$(dirname "$dir")"
start=$(date +%s)
echo "mkroot-debian13: debootstrap trixie into $new (about 8 minutes)"
include=$(IFS=,; echo "${pkgs[*]}")
debootstrap --variant=minbase --include="$include" trixie "$new" "$mirror" >"$new.log" 2>&1 ||
	{ tail -n 20 "$new.log" >&2; die "debootstrap failed (whole log: $new.log)"; }
{ chroot "$new" apt-get update -qq &&
	chroot "$new" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${apt_pkgs[@]}"; } >>"$new.log" 2>&1 ||
	{ tail -n 20 "$new.log" >&2; die "apt-get install ${apt_pkgs[*]} in the new root failed (whole log: $new.log)"; }
chroot "$new" apt-get clean
rm -rf "$new"/var/lib/apt/lists/*
ls "$new"/boot/vmlinuz-* >/dev/null 2>&1 || die "no kernel in $new/boot"
ls -d "$new"/usr/src/linux-headers-*-amd64 >/dev/null 2>&1 || die "no kernel headers in $new/usr/src"
echo "$stamp_text" >"$new/.gpuwatch-root"
rm -f "$new.log"
if [ -d "$dir" ]; then rm -rf --one-file-system "$dir"; fi
mv "$new" "$dir"
echo "mkroot-debian13: $dir ready ($(du -sm "$dir" | cut -f1) MB, $(($(date +%s) - start)) s)"
