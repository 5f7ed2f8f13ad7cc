#!/usr/bin/env bash
# The main job: build infiniop-c and run its benchmark on the default device
# (the CPU), checking every result against the float64 reference.
# Extra arguments go to the program, e.g. scripts/bench.sh --device nvidia
#
# The CPU job builds only the CPU backend, in build-cpu/ (no CUDA compiled);
# --device nvidia builds the CUDA backend in build/ (the folder
# scripts/test.sh uses). Each run's table is kept as JSON next to the
# program and the next run compares with it: a row whose ratio moved more
# than 10% since is marked unstable (infiniop-bench --compare).
set -euo pipefail
cd "$(dirname "$0")/.."
device=cpu prev=
for a in "$@"; do
  [ "$prev" = --device ] && device=$a
  prev=$a
done
if [ "$device" = nvidia ]; then
  build=build cuda=ON
else
  build=build-cpu cuda=OFF
fi
bash scripts/install-deps.sh bench    # cmake gcc make (and optional libdnnl-dev), when missing
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DINFINIOP_CUDA=$cuda >build-configure.log 2>&1 ||
  { cat build-configure.log; exit 1; }
cmake --build "$build" -j"${JOBS:-$(nproc)}" --target infiniop-bench
last=$build/bench-$device.json
[ -f "$last" ] && cp "$last" "$build/bench-$device.prev.json"
exec "$build/bench/infiniop-bench" --json "$last" --compare "$build/bench-$device.prev.json" "$@"
