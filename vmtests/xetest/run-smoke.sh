#!/bin/bash
# The gwxe smoke test in a VM: builds gwxe.ko and gwxe-smoke into RESULTS_DIR, boots Debian's
# 6.1 kernel once, loads the module, runs gwxe-smoke, unloads it, checks the kernel log (as root).
# usage: vmtests/xetest/run-smoke.sh [RESULTS_DIR]     (default /tmp/gwxe-smoke-results)
#   env KERNEL, VM_TIMEOUT: see vmtests/kmod/run-smoke.sh
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../kmod/run-smoke.sh" gwxe xe gwxe-smoke "$here/build.sh" "${1:-/tmp/gwxe-smoke-results}"
