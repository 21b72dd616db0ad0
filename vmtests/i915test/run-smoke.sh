#!/bin/bash
# The gwi915 smoke test in a VM: builds smoke (and, for the debian12 lane, gwi915.ko) into
# RESULTS_DIR, gets gwi915.ko for the lane's kernel, boots that kernel once, loads the module,
# runs smoke, unloads it, checks gwdummy's minor and the kernel log (as root).
# usage: vmtests/i915test/run-smoke.sh [RESULTS_DIR]
#   (default /tmp/gwi915-smoke, /tmp/gwi915-smoke-LANE for a lane other than debian12)
#   env LANE, KERNEL, VM_TIMEOUT: see vmtests/kmod/run-smoke.sh
here=$(cd "$(dirname "$0")" && pwd)
d=/tmp/gwi915-smoke
[ "${LANE:-debian12}" = debian12 ] || d=$d-$LANE
exec "$here/../kmod/run-smoke.sh" gwi915 i915 smoke "$here/build.sh" "${1:-$d}"
