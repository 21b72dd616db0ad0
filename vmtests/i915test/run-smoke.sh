#!/bin/bash
# The gwi915 smoke test in a VM: builds gwi915.ko and smoke into RESULTS_DIR, boots Debian's
# 6.1 kernel once, loads the module, runs smoke, unloads it, checks the kernel log (as root).
# usage: vmtests/i915test/run-smoke.sh [RESULTS_DIR]     (default /tmp/gwi915-smoke)
#   env KERNEL, VM_TIMEOUT: see vmtests/kmod/run-smoke.sh
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../kmod/run-smoke.sh" gwi915 i915 smoke "$here/build.sh" "${1:-/tmp/gwi915-smoke}"
