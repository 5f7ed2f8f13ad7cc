#!/usr/bin/env bash
# scripts/gpu-check.sh - one command on a GPU machine: configure and build for
# the GPU, run the whole test suite (CPU and GPU tests, then the Python tests
# if PyTorch is there), run the GPU test programs again under
# compute-sanitizer (memcheck and racecheck, quick case lists), and print a
# summary last.
#
# Needs: the CUDA toolkit (nvcc, compute-sanitizer), CMake, a C compiler;
# optionally Python 3 with numpy/PyTorch/pytest for the Python tests. No
# network. Logs go to $OUT (default: ./gpu-check-out):
#   build.log ctest.log pytest.log memcheck.log racecheck.log summary.txt
#   (+ bench: bench.log bench.txt bench.md bench.json bench.png;
#    sweep: sweep.log sweep.md sweep.json sweep.png sweep-chart.txt)
#
# Environment:
#   OUT                      log folder
#   INFINIOP_CUDA_ARCH       CMAKE_CUDA_ARCHITECTURES (default 90)
#   INFINIOP_GPU_CHECK_STAGES  the stages to run after the build, space- or
#                            comma-separated: tests (ctest, pytest),
#                            sanitizers, bench, sweep (default "tests
#                            sanitizers", plus "bench sweep" with
#                            INFINIOP_GPU_BENCH=1). With neither tests nor
#                            sanitizers only the two libraries are built.
#   INFINIOP_GPU_CHECK_BUDGET  seconds by which the sanitizer runs must end:
#                            each program gets at most 150 s and what would
#                            start later is skipped (default: the limit less
#                            15 s; 480 when the bench or sweep stage follows)
#   SAN_JOBS                 sanitizer runs at a time (default 4: the 16 runs,
#                            8 programs x memcheck and racecheck, in about a
#                            third of their sequential 170 s)
#   INFINIOP_GPU_BENCH=1     also run bench/gpu_bench.py --quick (table,
#                            JSON and chart to $OUT) and the shape sweep
#   INFINIOP_GPU_BENCH_ARGS  more arguments for the bench, e.g. "--no-compile"
#   INFINIOP_GPU_SWEEP_SHARD which part of the sweep (bench/gpu_sweep.py) the
#                            sweep stage runs: K/N (every N-th case from the
#                            K-th of its run order) or "all" (default 0/2).
#                            The whole sweep in two commands of the GPU
#                            machine:
#                              INFINIOP_GPU_CHECK_STAGES=sweep INFINIOP_GPU_SWEEP_SHARD=0/2 scripts/gpu-check.sh
#                              INFINIOP_GPU_CHECK_STAGES=sweep INFINIOP_GPU_SWEEP_SHARD=1/2 scripts/gpu-check.sh
#                            then bench/gpu_sweep.py --merge A/sweep.json
#                            B/sweep.json --out DIR joins the two.
#   INFINIOP_GPU_SWEEP_BUDGET  its time budget in seconds (default: what is
#                            left of INFINIOP_GPU_CHECK_LIMIT less 40 s)
#   INFINIOP_GPU_CHECK_LIMIT seconds the whole script must end within
#                            (default 570: the GPU machine's 600 s a command)
#   INFINIOP_GPU_SWEEP_ARGS  more arguments for the sweep, e.g. "--ops silu,sigmoid"
# Exit status: 0 when every stage that ran passed: the build, every test,
# both sanitizers clean, the bench's cases matched, and the sweep ran every
# case of its shard with no mismatch against float64 and no library error.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-check-out}
mkdir -p "$OUT"
BUILD=$ROOT/build-gpu
ARCH=${INFINIOP_CUDA_ARCH:-90}
LIMIT=${INFINIOP_GPU_CHECK_LIMIT:-570}
JOBS=$(nproc 2>/dev/null || echo 8)
T0=$(date +%s)
elapsed() { echo $(($(date +%s) - T0)); }
status=0
step() { printf '\n== [%4ss] %s\n' "$(elapsed)" "$*"; }
STAGES=${INFINIOP_GPU_CHECK_STAGES:-"tests sanitizers$([ "${INFINIOP_GPU_BENCH:-0}" = 1 ] && echo " bench sweep" || true)"}
STAGES=" ${STAGES//,/ } "
want() { [[ $STAGES == *" $1 "* ]]; }
# Where the sanitizers are the last stage they may run to the command's
# limit less 15 s (a cold GPU machine's build took 149 s where a warm one
# took 90, and a fixed 480 s left racecheck two programs short); where the
# bench or the sweep follows them they stop at 480 s.
if want bench || want sweep; then BUDGET=${INFINIOP_GPU_CHECK_BUDGET:-480}; else BUDGET=${INFINIOP_GPU_CHECK_BUDGET:-$((LIMIT - 15))}; fi

# ------------------------------------------------------------------ device
step "device"
DEVICE="no GPU visible (nvidia-smi failed)"
if command -v nvidia-smi >/dev/null 2>&1 &&
   DEVICE=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -n 1); then
  :
else
  DEVICE="no GPU visible (nvidia-smi failed)"
fi
echo "$DEVICE"
command -v nvcc >/dev/null 2>&1 && nvcc --version | tail -n 1 || echo "nvcc not on PATH"

# ------------------------------------------------------------------ build
step "configure and build (CMAKE_CUDA_ARCHITECTURES=$ARCH, $JOBS jobs) -> $OUT/build.log"
GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
build_ok=1
TARGETS=()
want tests || want sanitizers || TARGETS=(--target infiniop infinirt)
if ! { cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DINFINIOP_CUDA=ON \
         -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DINFINIOP_BUILD_BENCH=OFF &&
       cmake --build "$BUILD" -j "$JOBS" ${TARGETS[@]+"${TARGETS[@]}"}; } >"$OUT/build.log" 2>&1; then
  build_ok=0
  status=1
  tail -n 40 "$OUT/build.log"
fi
grep -E "warning" "$OUT/build.log" | sort -u | head -n 20 || true
echo "build: $([ $build_ok = 1 ] && echo ok || echo FAILED) ($(elapsed) s)"

# ------------------------------------------------------------------ tests
# ctest and the Python tests run side by side (neither times anything; on
# a cold GPU machine one after the other left the sanitizers short of the
# command's 600 s: build 189 s, ctest 104, pytest 132, sanitizers 170).
CTEST_LINE="not run"
CTEST_SKIPPED="-"
GPU_LINE="not run"
PYTEST_LINE="not run"
PYTEST_PID=
if [ $build_ok = 1 ] && want tests && [ -d python/tests ]; then
  if python3 -c "import numpy, pytest" >/dev/null 2>&1; then
    step "python tests (beside ctest) -> $OUT/pytest.log"
    (
      set +e
      PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH} INFINIOP_LIBRARY_PATH=$BUILD \
        timeout 300 python3 -m pytest -q -p no:cacheprovider python/tests >"$OUT/pytest.log" 2>&1
      echo $? >"$OUT/.pytest.rc"
    ) &
    PYTEST_PID=$!
  else
    PYTEST_LINE="not run (python3 with numpy and pytest not found)"
  fi
fi
if [ $build_ok = 1 ] && want tests; then
  step "ctest (all tests, cpu and gpu labels) -> $OUT/ctest.log"
  set +e
  ctest --test-dir "$BUILD" --output-on-failure -j 4 --timeout 900 >"$OUT/ctest.log" 2>&1
  rc=$?
  set -e
  [ $rc = 0 ] || status=1
  CTEST_LINE=$(grep -E "tests passed|tests failed" "$OUT/ctest.log" | tail -n 1 || echo "no ctest summary")
  CTEST_SKIPPED=$(grep -c "(Skipped)" "$OUT/ctest.log" || true)
  GPU_PASSED=$(grep -cE "_nvidia \.+ +Passed" "$OUT/ctest.log" || true)
  GPU_FAILED=$(grep -cE "_nvidia \.+.*(Failed|Timeout|Exception)" "$OUT/ctest.log" || true)
  GPU_SKIPPED=$(grep -cE "_nvidia \(Skipped\)" "$OUT/ctest.log" || true)
  GPU_LINE="$GPU_PASSED passed, $GPU_FAILED failed, $GPU_SKIPPED skipped"
  [ "$GPU_SKIPPED" = 0 ] || status=1 # on a GPU machine every GPU test must run
  grep -E "Test +#|tests passed|Skipped|Failed" "$OUT/ctest.log" | tail -n 40 || true
  grep -E "^test_cuda_large: cases" "$OUT/ctest.log" || true
  echo "ctest done ($(elapsed) s)"
fi
if [ -n "$PYTEST_PID" ]; then
  wait "$PYTEST_PID" || true
  rc=$(cat "$OUT/.pytest.rc" 2>/dev/null || echo 1)
  rm -f "$OUT/.pytest.rc"
  [ "$rc" = 0 ] || status=1
  PYTEST_LINE=$(tail -n 1 "$OUT/pytest.log")
  echo "pytest: $PYTEST_LINE ($(elapsed) s)"
fi

# ------------------------------------------------------------------ sanitizers
# The GPU test programs, quick case lists (INFINIOP_TEST_QUICK=1: no cases of
# more than 2^31 elements), under memcheck and racecheck: the 16 runs go
# SAN_JOBS at a time (default 4; each run is one process with its own
# context, and none times anything), each with at most 150 s and none
# started later than the budget allows. Errors are counted from the tools'
# summaries; memcheck.log and racecheck.log hold the runs in program order.
SAN_BINS=(test_add_rms_norm test_causal_softmax test_layer_norm test_silu test_sigmoid
          test_cuda_graph test_streams test_cuda_large)
SAN_JOBS=${SAN_JOBS:-4}
declare -A SAN_ERRORS SAN_RUNS
SAN_DIR=$OUT/.sanitizer
san_one() { # tool program: one run, its output and its error count under $SAN_DIR
  set +e # (a background subshell: the script's -e and pipefail stay as they are)
  local tool=$1 b=$2 left=$3
  local one=$SAN_DIR/$tool-$b.log
  INFINIOP_TEST_QUICK=1 timeout "$left" compute-sanitizer --tool "$tool" --print-limit 20 \
    "$BUILD/tests/$b" --device nvidia --quick >"$one" 2>&1
  local rc=$? n
  if [ "$tool" = memcheck ]; then
    n=$(grep -E "ERROR SUMMARY: [0-9]+ error" "$one" | tail -n 1 | sed -E 's/.*ERROR SUMMARY: ([0-9]+) error.*/\1/')
  else
    n=$(grep -E "RACECHECK SUMMARY: .*\([0-9]+ errors?" "$one" | tail -n 1 |
        sed -E 's/.*\(([0-9]+) errors?.*/\1/')
    [ -n "$n" ] || n=$(grep -E "ERROR SUMMARY: [0-9]+ error" "$one" | tail -n 1 |
                       sed -E 's/.*ERROR SUMMARY: ([0-9]+) error.*/\1/')
  fi
  if [ -z "$n" ]; then
    echo "== $b: no $tool summary (exit $rc): counted as 1 error" >>"$one"
    n=1
  elif [ $rc != 0 ]; then
    echo "== $b: exit status $rc under $tool (test failure or timeout): counted as 1 error" >>"$one"
    n=$((n + 1))
  fi
  echo "== $b: $n $tool errors ($(elapsed) s)" >>"$one"
  echo "$n" >"$SAN_DIR/$tool-$b.n"
}
run_sanitizers() { # every (tool, program) run, SAN_JOBS at a time
  rm -rf "$SAN_DIR"
  mkdir -p "$SAN_DIR"
  local tool b running=0
  for tool in memcheck racecheck; do
    for b in "${SAN_BINS[@]}"; do
      [ -x "$BUILD/tests/$b" ] || continue
      while [ $running -ge "$SAN_JOBS" ]; do wait -n || true; running=$((running - 1)); done
      local left=$((BUDGET - $(elapsed)))
      [ $left -gt 150 ] && left=150
      if [ $left -lt 20 ]; then
        echo "== $b: not run (time budget of $BUDGET s used)" >"$SAN_DIR/$tool-$b.log"
        continue
      fi
      san_one "$tool" "$b" "$left" &
      running=$((running + 1))
    done
  done
  wait || true
  for tool in memcheck racecheck; do
    local log=$OUT/$tool.log total=0 runs=0 skipped=0
    : >"$log"
    for b in "${SAN_BINS[@]}"; do
      [ -f "$SAN_DIR/$tool-$b.log" ] || continue
      echo "== $b ($tool)" >>"$log"
      cat "$SAN_DIR/$tool-$b.log" >>"$log"
      if [ -f "$SAN_DIR/$tool-$b.n" ]; then
        total=$((total + $(cat "$SAN_DIR/$tool-$b.n")))
        runs=$((runs + 1))
      else
        skipped=$((skipped + 1))
      fi
    done
    SAN_ERRORS[$tool]=$total
    SAN_RUNS[$tool]="$runs programs"
    if [ "$skipped" != 0 ]; then SAN_RUNS[$tool]="$runs programs, $skipped not run for time"; status=1; fi
    [ "$total" = 0 ] || status=1
    grep -E "^== .*($tool errors \(|not run)" "$log" || true
  done
  rm -rf "$SAN_DIR"
}
if ! want sanitizers; then
  SAN_ERRORS[memcheck]="not run"; SAN_ERRORS[racecheck]="not run"
  SAN_RUNS[memcheck]="stage not selected"; SAN_RUNS[racecheck]="stage not selected"
elif [ $build_ok = 1 ] && command -v compute-sanitizer >/dev/null 2>&1; then
  step "compute-sanitizer memcheck and racecheck, $SAN_JOBS runs at a time -> $OUT/memcheck.log, racecheck.log"
  run_sanitizers
else
  SAN_ERRORS[memcheck]="not run"; SAN_ERRORS[racecheck]="not run"
  SAN_RUNS[memcheck]="compute-sanitizer not found or build failed"; SAN_RUNS[racecheck]=${SAN_RUNS[memcheck]}
  status=1
fi

# ------------------------------------------------------------------ benchmark
BENCH_LINE="not run (stage bench: INFINIOP_GPU_BENCH=1)"
if [ $build_ok = 1 ] && want bench; then
  step "benchmark -> $OUT/bench.log"
  set +e
  PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH} INFINIOP_LIBRARY_PATH=$BUILD \
    timeout 300 python3 bench/gpu_bench.py --quick --out "$OUT" ${INFINIOP_GPU_BENCH_ARGS:-} >"$OUT/bench.log" 2>&1
  rc=$?
  set -e
  [ $rc = 0 ] || status=1
  BENCH_LINE="exit $rc, see bench.log; $(grep -E '^targets met' "$OUT/bench.log" | tail -n 1 || true)"
fi

# ------------------------------------------------------------------ shape sweep
# Within what is left of the command's limit: the sweep stops starting cases
# at its budget, then writes its table, JSON and chart. The stage passes when
# every case of its shard ran, matched float64 and raised no library error.
SWEEP_LINE="not run (stage sweep: INFINIOP_GPU_BENCH=1 or INFINIOP_GPU_CHECK_STAGES=sweep)"
if [ $build_ok = 1 ] && want sweep; then
  SHARD=${INFINIOP_GPU_SWEEP_SHARD:-0/2}
  SHARD_ARGS=()
  [ "$SHARD" = all ] || SHARD_ARGS=(--shard "$SHARD")
  # 40 s for the last case, the files and the chart: past budget + 30 s the
  # sweep gets SIGTERM (it then writes what it measured), 10 s later KILL
  left=$((LIMIT - $(elapsed) - 40))
  SWEEP_BUDGET=${INFINIOP_GPU_SWEEP_BUDGET:-$left}
  [ $left -lt "$SWEEP_BUDGET" ] && SWEEP_BUDGET=$left
  if [ "$SWEEP_BUDGET" -lt 30 ]; then
    SWEEP_LINE="not run (only $((left + 40)) s left of the ${LIMIT} s limit)"
    status=1
  else
    step "shape sweep, shard $SHARD (budget $SWEEP_BUDGET s) -> $OUT/sweep.log, sweep.md, sweep.json, sweep.png"
    set +e
    PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH} INFINIOP_LIBRARY_PATH=$BUILD \
      timeout -k 10 $((SWEEP_BUDGET + 30)) python3 bench/gpu_sweep.py --quick ${SHARD_ARGS[@]+"${SHARD_ARGS[@]}"} --budget "$SWEEP_BUDGET" \
      --out "$OUT" ${INFINIOP_GPU_SWEEP_ARGS:-} >"$OUT/sweep.log" 2>&1
    rc=$?
    set -e
    # a case mismatched float64 or the library failed, it could not run, or
    # cases of the shard were not run (budget or timeout)
    if [ $rc != 0 ] || grep -qE "^!!! [0-9]+ case\(s\) FAILED" "$OUT/sweep.log" ||
       ! grep -qE "^sweep: .* 0 not run, 0 failed" "$OUT/sweep.log"; then status=1; fi
    sed -n '/^summary per operator/,/^sweep:/p' "$OUT/sweep.log" || true
    SWEEP_LINE="shard $SHARD, exit $rc, see sweep.log, sweep.md; $(grep -E '^sweep:' "$OUT/sweep.log" | tail -n 1 || true)"
  fi
fi

# ------------------------------------------------------------------ summary
{
  echo "==================== gpu-check summary ===================="
  echo "device:     $DEVICE"
  echo "stages:    $STAGES"
  echo "build:      $([ $build_ok = 1 ] && echo ok || echo FAILED) (CUDA architectures $ARCH)"
  echo "ctest:      $CTEST_LINE; $CTEST_SKIPPED skipped"
  echo "gpu tests:  $GPU_LINE"
  echo "pytest:     $PYTEST_LINE"
  echo "memcheck:   ${SAN_ERRORS[memcheck]} errors (${SAN_RUNS[memcheck]})"
  echo "racecheck:  ${SAN_ERRORS[racecheck]} errors (${SAN_RUNS[racecheck]})"
  echo "benchmark:  $BENCH_LINE"
  echo "sweep:      $SWEEP_LINE"
  echo "time:       $(elapsed) s"
  echo "result:     $([ $status = 0 ] && echo PASS || echo FAIL)"
} | tee "$OUT/summary.txt"
exit $status
