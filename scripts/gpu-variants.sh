#!/usr/bin/env bash
# scripts/gpu-variants.sh - on a GPU machine, after scripts/gpu-check.sh has
# built build-gpu/: run bench/gpu_bench.py (quick, no torch.compile) once a
# variant, each variant an environment assignment that selects a kernel
# configuration, and print each run's table of the library's times.
#   INFINIOP_VARIANTS   ';'-separated, e.g.
#     "INFINIOP_CUDA_UNARY=128,2@silu|sigmoid;INFINIOP_CUDA_REG=all@layer_norm"
#     (VAR=VALUE@CASE_REGEX)
# Logs: $OUT/variants.txt
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-check-out}
mkdir -p "$OUT"
IFS=';' read -ra VS <<<"${INFINIOP_VARIANTS:-}"
for v in "${VS[@]}"; do
  assign=${v%%@*}
  cases=${v#*@}
  echo "==== variant $assign (cases: $cases)"
  env "$assign" PYTHONPATH="$ROOT/python" INFINIOP_LIBRARY_PATH="$ROOT/build-gpu" \
    python3 bench/gpu_bench.py --quick --no-compile --cases "$cases" --out "$OUT/variant-tmp" 2>&1 |
    grep -E "^[a-z].*(copy|infiniop)|^ {40,}infiniop" | cut -c1-120
done | tee "$OUT/variants.txt"
rm -rf "$OUT/variant-tmp"
