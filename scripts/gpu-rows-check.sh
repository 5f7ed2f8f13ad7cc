#!/bin/bash
# scripts/gpu-rows-check.sh - one device call for the row-plan work (issue
# #21 item 1, #19 row operators): build this tree and, in parallel, the
# baseline library from BASE (a checkout of the branch point), run the GPU
# test programs, then the row sweep cases (odd-T softmax, named, decode)
# with the peers (eager, compile, copy) for this tree and for the baseline
# on the same card. Logs and sweep.md/.json under $OUT (base/: baseline).
#   BASE=.. OUT=out scripts/gpu-rows-check.sh
set -o pipefail
OUT=${OUT:-out}
BASE=${BASE:-..}
mkdir -p "$OUT/base"
T0=$(date +%s)
el() { echo $(($(date +%s) - T0)); }
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
git -C "$BASE" log --oneline -1 2>/dev/null | sed 's/^/baseline: /'
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DINFINIOP_CUDA=ON -DINFINIOP_CUDA_ARCHITECTURES=90)
(cmake -S . -B build-gpu "${cfg[@]}" >/dev/null && cmake --build build-gpu -j10) >build-gpu.log 2>&1 &
p1=$!
(cmake -S "$BASE" -B build-base "${cfg[@]}" -DINFINIOP_BUILD_BENCH=OFF -DBUILD_TESTING=OFF >/dev/null &&
  cmake --build build-base -j6 --target infiniop) >build-base.log 2>&1 &
p2=$!
if ! wait $p1; then tail -40 build-gpu.log; exit 1; fi
echo "build: ok ($(el) s)"
timeout 100 ctest --test-dir build-gpu -L gpu -E cuda_large -j4 --output-on-failure >"$OUT/ctest.log" 2>&1
echo "ctest (gpu label, without test_cuda_large): rc $? ($(el) s)"
grep -E "tests passed|tests failed|Failed|Timeout" "$OUT/ctest.log" | tail -8
CASES=${CASES:-'causal_softmax (f16|bf16) (12x197x197|32x7x1031|40x777x777|2x16x1500x1500|7x129x3001|3x1001x1001|16x333x1025|14x999x2047|32x2048x2048|1x4096|32x1x777)$|(layer_norm|add_rms_norm) bf16 (4096x768|8192x768|1x4096)$'}
PYTHONUNBUFFERED=1 PYTHONPATH=python INFINIOP_LIBRARY_PATH=build-gpu timeout 110 python3 bench/gpu_sweep.py --quick \
  --budget 80 --cases "$CASES" --out "$OUT" 2>&1 | grep -vE '^\s*$' | tail -45
echo "sweep: ($(el) s)"
if wait $p2; then
  PYTHONUNBUFFERED=1 PYTHONPATH=python INFINIOP_LIBRARY_PATH=build-base timeout 60 python3 bench/gpu_sweep.py --quick \
    --compile off --budget 45 --cases "$CASES" --out "$OUT/base" 2>&1 | sed -n '/^ *#\|^ *[0-9]/p' | tail -25
  rm -f "$OUT/base/sweep.png"
else
  echo "baseline build failed"; tail -5 build-base.log
fi
echo "baseline sweep: ($(el) s)"
left=$((285 - $(el)))
if [ $left -gt 20 ]; then
  timeout $left build-gpu/tests/test_cuda_large --device nvidia 2>&1 | tail -4
fi
echo "done ($(el) s)"
