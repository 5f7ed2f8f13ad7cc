#!/bin/bash
# scripts/gpu-compare.sh - one device call that checks a change against a
# baseline on the same card: build this tree and, in parallel, the baseline
# library from BASE (a checkout of the commit to compare with), run every
# GPU test program, memcheck the programs named in SAN (quick lists), then
# the sweep cases chosen by SWEEP (gpu_sweep.py selection arguments;
# default: the row operators' odd-T softmax, named and decode cases) with
# the peers (eager, compile, copy) for this tree, and for the baseline
# (library only) on the same cases. Logs and sweep.md/.json under $OUT
# (base-sweep.md: the baseline; BASE/.commit may name its commit).
#   BASE=.. OUT=out [SWEEP="--category named,odd"] [SWEEP_BUDGET=s] scripts/gpu-compare.sh
# EXTRA_CMAKE: further configure arguments for this tree's build (e.g.
# -DINFINIOP_CUDA_EXPERIMENTS=ON: the same release plans, plus the
# planner's environment knobs for variants run afterwards).
set -o pipefail
OUT=${OUT:-out}
BASE=${BASE:-..}
mkdir -p "$OUT"
T0=$(date +%s)
el() { echo $(($(date +%s) - T0)); }
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
echo "baseline: $BASE ($(cat "$BASE/.commit" 2>/dev/null || git -C "$BASE" log --oneline -1 2>/dev/null))"
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DINFINIOP_CUDA=ON -DINFINIOP_CUDA_ARCHITECTURES=90)
(cmake -S . -B build-gpu "${cfg[@]}" ${EXTRA_CMAKE:-} >/dev/null && cmake --build build-gpu -j10) >build-gpu.log 2>&1 &
p1=$!
(cmake -S "$BASE" -B build-base "${cfg[@]}" -DINFINIOP_BUILD_BENCH=OFF -DBUILD_TESTING=OFF >/dev/null &&
  cmake --build build-base -j6 --target infiniop) >build-base.log 2>&1 &
p2=$!
if ! wait $p1; then tail -40 build-gpu.log; exit 1; fi
echo "build: ok ($(el) s)"
timeout ${CTEST_TIMEOUT:-150} ctest --test-dir build-gpu -L gpu -j4 --output-on-failure >"$OUT/ctest.log" 2>&1
echo "ctest (gpu label): rc $? ($(el) s)"
grep -E "tests passed|tests failed|Failed|Timeout" "$OUT/ctest.log" | tail -8
for t in ${SAN:-}; do
  INFINIOP_TEST_QUICK=1 timeout 90 compute-sanitizer --tool memcheck --print-limit 5 build-gpu/tests/$t \
    --device nvidia --quick >"$OUT/memcheck-$t.log" 2>&1
  echo "memcheck $t: rc $? $(grep -E 'ERROR SUMMARY' "$OUT/memcheck-$t.log" | tail -1) ($(el) s)"
done
CASES=${CASES:-'causal_softmax (f16|bf16) (12x197x197|32x7x1031|40x777x777|2x16x1500x1500|7x129x3001|3x1001x1001|16x333x1025|14x999x2047|32x2048x2048|1x4096|32x1x777)$|(layer_norm|add_rms_norm) bf16 (4096x768|8192x768|1x4096)$'}
if [ -n "${SWEEP:-}" ]; then SEL=($SWEEP); else SEL=(--cases "$CASES"); fi
B=${SWEEP_BUDGET:-80}
PYTHONUNBUFFERED=1 PYTHONPATH=python INFINIOP_LIBRARY_PATH=build-gpu timeout $((B + 30)) python3 bench/gpu_sweep.py --quick \
  --budget "$B" "${SEL[@]}" --out "$OUT" 2>&1 | grep -vE '^\s*$' | tail -45
echo "sweep: ($(el) s)"
if wait $p2; then
  PYTHONUNBUFFERED=1 PYTHONPATH=python INFINIOP_LIBRARY_PATH=build-base timeout $((${BASE_BUDGET:-45} + 20)) python3 bench/gpu_sweep.py --quick \
    --compile off --budget "${BASE_BUDGET:-45}" "${SEL[@]}" --out "$OUT/base" 2>&1 |
    grep -E '^(add_rms_norm|layer_norm|causal_softmax|silu|sigmoid) ' | sed 's/^/base: /' | tail -60
  # one file back for the baseline (the device returns at most 8)
  mv "$OUT/base/sweep.md" "$OUT/base-sweep.md" 2>/dev/null; rm -rf "$OUT/base" "$OUT/sweep-chart.txt"
else
  echo "baseline build failed"; tail -5 build-base.log
fi
echo "baseline sweep: ($(el) s)"
echo "done ($(el) s)"
