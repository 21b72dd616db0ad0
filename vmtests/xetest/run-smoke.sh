#!/bin/bash
# The gwxe smoke test in a VM: builds gwxe-smoke (and, for the debian12 lane, gwxe.ko) into
# RESULTS_DIR, gets gwxe.ko for the lane's kernel, boots that kernel once, loads the module,
# runs gwxe-smoke, unloads it, checks gwdummy's minor and the kernel log (as root).
# usage: vmtests/xetest/run-smoke.sh [RESULTS_DIR]
#   (default /tmp/gwxe-smoke-results, /tmp/gwxe-smoke-results-LANE for a lane other than debian12)
#   env LANE, KERNEL, VM_TIMEOUT: see vmtests/kmod/run-smoke.sh
here=$(cd "$(dirname "$0")" && pwd)
d=/tmp/gwxe-smoke-results
[ "${LANE:-debian12}" = debian12 ] || d=$d-$LANE
exec "$here/../kmod/run-smoke.sh" gwxe xe gwxe-smoke "$here/build.sh" "${1:-$d}"
