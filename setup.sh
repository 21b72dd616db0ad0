#!/usr/bin/env bash
# Installs everything gpuwatch needs to build, run and test on Debian 12 (root), and the
# Debian 13 root of the VM suite's second lane. Idempotent: packages already present are left
# alone, a complete lane root is kept.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "setup.sh: must run as root (apt-get install)" >&2; exit 1; }

pkgs=(
  build-essential cmake pkg-config git clang clang-format llvm libbpf-dev bpftool libelf-dev zlib1g-dev
  libdrm-dev libcli11-dev libgtest-dev libgmock-dev nlohmann-json3-dev libxxhash-dev
  qemu-system-x86 linux-image-amd64 linux-headers-amd64 busybox-static criu kmod
  python3-pip podman runc debootstrap libdrm-tests
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v vng >/dev/null 2>&1; then
  echo "setup: installing virtme-ng (PyPI)"
  python3 -m pip install --quiet virtme-ng || python3 -m pip install --quiet --break-system-packages virtme-ng
fi
# Where `gpuwatch container-config` writes by default. The VM suite (whose root is this
# machine's, read-only) mounts a scratch tmpfs over them, which needs them to exist.
mkdir -p /etc/criu /etc/containers/oci/hooks.d /usr/share/containers/oci/hooks.d
# The VM suite's second lane: a Debian 13 root (kernel 6.12, CRIU 4.1, podman 5.4, runc, crun)
# from Debian's archive, made once (about 4-10 minutes, 1.5 GB) and kept in
# ${GPUWATCH_VM_ROOTS:-/var/lib/gpuwatch/vm-roots}/debian13.
"$(dirname "$0")/vmtests/lanes/mkroot-debian13.sh"
echo "setup: all dependencies present"
