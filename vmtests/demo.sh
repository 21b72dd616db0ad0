#!/bin/bash
# The demo (README's first command): builds gpuwatch, its CRIU plugin and action script and the
# demo's workload (nothing else), boots Debian's kernel in a VM
# (virtme-ng, TCG), loads vgem, attaches gpuwatch to a cgroup, runs a workload that creates,
# maps, exports, imports and destroys GEM buffers, and shows the live manifest as it changes.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
echo "demo: building gpuwatch, its CRIU plugin and action script, and the workload wl_demo"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUWATCH_TESTS=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target gpuwatch gpuwatch_criu gpuwatch-criu-action wl_demo >/dev/null
GUEST_SCRIPT=$PWD/vmtests/guest/demo.sh WL_DIR=$PWD/$BUILD/vmtests NO_TEST_MODULES=1 RESULTS=$PWD/$BUILD/demo-results exec vmtests/run.sh "$BUILD"
