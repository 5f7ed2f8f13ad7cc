#!/usr/bin/env bash
# scripts/gpu-variants.sh - on a GPU machine: build the library with the
# experiment knobs compiled in (-DINFINIOP_CUDA_EXPERIMENTS=ON, into
# build-gpu-exp/; a release build ignores the INFINIOP_CUDA_* variables),
# then run bench/gpu_bench.py (quick, no torch.compile) once a variant, each
# variant an environment assignment that selects a kernel configuration
# (src/cuda/device.cu, src/ops/unary/cuda.cu list them), and print each
# run's table of the library's times.
#   INFINIOP_VARIANTS   ';'-separated, e.g.
#     "INFINIOP_CUDA_UNARY=128,2@silu|sigmoid;INFINIOP_CUDA_REG=all@layer_norm"
#     (VAR=VALUE@CASE_REGEX)
# Logs: $OUT/variants.txt
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-check-out}
mkdir -p "$OUT"
. scripts/gpu-exp-build.sh
build_gpu_exp "$OUT/variants-build.log" || { echo "build failed: see $OUT/variants-build.log"; exit 1; }
IFS=';' read -ra VS <<<"${INFINIOP_VARIANTS:-}"
for v in "${VS[@]}"; do
  assign=${v%%@*}
  cases=${v#*@}
  echo "==== variant $assign (cases: $cases)"
  env "$assign" PYTHONPATH="$ROOT/python" INFINIOP_LIBRARY_PATH="$BUILD" \
    python3 bench/gpu_bench.py --quick --no-compile --cases "$cases" --out "$OUT/variant-tmp" 2>&1 |
    grep -E "^[a-z].*(copy|infiniop)|^ {40,}infiniop" | cut -c1-120
done | tee "$OUT/variants.txt"
rm -rf "$OUT/variant-tmp"
