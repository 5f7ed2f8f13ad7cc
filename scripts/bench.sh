#!/usr/bin/env bash
# The main job: build infiniop-c and run its benchmark on the default device
# (the CPU), checking every result against the float64 reference.
# Extra arguments go to the program, e.g. scripts/bench.sh --device nvidia
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh bench    # cmake gcc make (and optional libdnnl-dev), when missing
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >build-configure.log 2>&1 || { cat build-configure.log; exit 1; }
cmake --build build -j"${JOBS:-$(nproc)}" --target infiniop-bench
exec build/bench/infiniop-bench "$@"
