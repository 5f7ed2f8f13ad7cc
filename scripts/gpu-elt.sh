#!/usr/bin/env bash
# scripts/gpu-elt.sh - the elementwise (silu, sigmoid) check of the GPU
# machine in one command of under 300 s: build the library and the unary
# tests, run them on the GPU, print the plan of issue #19's shapes, time
# the sweep's silu/sigmoid cases of the categories the elementwise plan
# targets against eager and torch.compile, then the >2^31-element test.
# Outputs (ctest.log, plans.log, sweep.log, sweep.md/.json/.png, large.log)
# go to $OUT (default out-elt/).
set -o pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT" || exit 1
OUT="${OUT:-$ROOT/out-elt}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=python INFINIOP_LIBRARY_PATH=build-gpu
nvidia-smi --query-gpu=name --format=csv,noheader
# ELT_MICRO=1: a build with the experiment knobs (a default build's plans
# when none is set) and bench/elt_micro.py's variants after the plans
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DINFINIOP_CUDA=ON \
  -DINFINIOP_CUDA_ARCHITECTURES=90 -DINFINIOP_CUDA_EXPERIMENTS="$([ "${ELT_MICRO:-0}" = 1 ] && echo ON || echo OFF)" \
  >/dev/null || exit 1
cmake --build build-gpu -j16 --target infiniop test_silu test_sigmoid test_cuda_large 2>&1 | tail -2 || exit 1
rc=0
timeout 60 ctest --test-dir build-gpu -R "silu_nvidia|sigmoid_nvidia" --output-on-failure 2>&1 |
  tee "$OUT/ctest.log" | tail -8 || rc=1
python3 bench/elt_plans.py 2>&1 | tee "$OUT/plans.log" | grep -o "shape=.*" | cut -c1-260
if [ "${ELT_MICRO:-0}" = 1 ]; then
  timeout "${ELT_MICRO_TIMEOUT:-60}" python3 bench/elt_micro.py >"$OUT/micro.log" 2>&1 || rc=1
  grep "^|" "$OUT/micro.log"
fi
timeout "${ELT_SWEEP_TIMEOUT:-150}" python3 bench/gpu_sweep.py --quick --ops silu,sigmoid \
  --category "${ELT_CATEGORIES:-named,decode,tiny,few-rows,view,odd}" --budget "${ELT_BUDGET:-115}" \
  --out "$OUT" 2>&1 | tee "$OUT/sweep.log" | grep -v "^ *$" | tail -105 || rc=1
timeout "${ELT_LARGE_TIMEOUT:-50}" ctest --test-dir build-gpu -R cuda_large --output-on-failure 2>&1 |
  tee "$OUT/large.log" | tail -6 || rc=1
exit $rc
