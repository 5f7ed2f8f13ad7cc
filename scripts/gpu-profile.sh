#!/usr/bin/env bash
# scripts/gpu-profile.sh - on a GPU machine: build the library (sm_90 by
# default) into build-gpu-exp/, with the experiment knobs compiled in
# (-DINFINIOP_CUDA_EXPERIMENTS=ON: unset, they leave the default plans), and
# profile each benchmark case's kernel with
# Nsight Compute (bench/gpu_profile.py; one kernel a case, in case order).
# Writes $OUT/ncu.txt (and ncu-<variant>.txt for each INFINIOP_CUDA_REG
# variant named in INFINIOP_PROFILE_VARIANTS, e.g. "all wide").
#   INFINIOP_PROFILE_CASES   regex over case names (default: all)
#   INFINIOP_PROFILE_SECTIONS  ncu sections (default below)
#   INFINIOP_PROFILE_ARGS    more arguments for bench/gpu_profile.py (--peers)
#   INFINIOP_NCU_ARGS        more arguments for ncu (--print-details all)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-profile-out}
mkdir -p "$OUT"
. scripts/gpu-exp-build.sh
build_gpu_exp "$OUT/profile-build.log"
SECTIONS=${INFINIOP_PROFILE_SECTIONS:-"SpeedOfLight Occupancy LaunchStats WarpStateStats"}
args=()
for s in $SECTIONS; do args+=(--section "$s"); done
run() { # $1: output file; environment set by the caller
  PYTHONPATH=$ROOT/python INFINIOP_LIBRARY_PATH=$BUILD \
    ncu --clock-control none --nvtx --nvtx-include "prof/" "${args[@]}" ${INFINIOP_NCU_ARGS:-} \
    python3 bench/gpu_profile.py ${INFINIOP_PROFILE_CASES:+--cases "$INFINIOP_PROFILE_CASES"} \
    ${INFINIOP_PROFILE_ARGS:-} >"$1" 2>&1 || echo "ncu failed: see $1"
}
run "$OUT/ncu.txt"
for v in ${INFINIOP_PROFILE_VARIANTS:-}; do INFINIOP_CUDA_REG=$v run "$OUT/ncu-$v.txt"; done
# one line a kernel: name, duration, DRAM throughput, registers, achieved occupancy
for f in "$OUT"/ncu*.txt; do
  echo "== $f"
  grep -E "^  [A-Za-z_].*\(|Duration|DRAM Throughput|Registers Per Thread|Achieved Occupancy|profiled:" "$f" |
    sed -E 's/ +/ /g' | cut -c1-140
done
