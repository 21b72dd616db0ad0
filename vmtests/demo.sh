#!/bin/bash
# The demo (README's first command): builds gpuwatch, boots Debian's kernel in a VM
# (virtme-ng, TCG), loads vgem, attaches gpuwatch to a cgroup, runs a workload that creates,
# maps, exports, imports and destroys GEM buffers, and shows the live manifest as it changes.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j"$(nproc)" >/dev/null
GUEST_SCRIPT=$PWD/vmtests/guest/demo.sh RESULTS=$PWD/$BUILD/demo-results exec vmtests/run.sh "$BUILD"
