#!/usr/bin/env bash
# Hardening checks of infiniop-c (CPU), the last stage of scripts/test.sh.
# Each stage builds in its own directory (CUDA off; the CPU kernels' x86-64
# passes only up to the widest this CPU runs: host_max_isa below) and must
# be clean:
#   asan      the C tests (ctest -L cpu, INFINIOP_TEST_QUICK=1,
#             INFINIOP_TEST_MEMCHECK=1) built with AddressSanitizer +
#             UndefinedBehaviorSanitizer (gcc, -DINFINIOP_SANITIZE=ON);
#             LeakSanitizer runs at every exit
#   tsan      the multithreaded tests built with ThreadSanitizer, run with
#             OMP_NUM_THREADS=1 (libgomp is not TSan-instrumented: its
#             barriers would be reported as races)
#   memcheck  valgrind memcheck of every C test binary (-O2 -g build,
#             INFINIOP_TEST_QUICK=1) and of the fuzz corpus replayed without
#             sanitizers, JOBS programs at once; scripts/valgrind.supp
#             documents each suppression.
#             Memcheck errors, crashes and failed checks all fail this stage.
#             valgrind's floating point is not the hardware's (64-bit x87
#             long double, no FTZ/DAZ): the tests detect valgrind
#             (INFINIOP_TEST_UNDER_VALGRIND=1, set here, or valgrind.h) and
#             skip only the checks it changes, saying so (test_vec: all)
#   fuzz      libFuzzer target fuzz/fuzz_ops.c (clang-14, ASan + UBSan; the
#             CPU kernel files without UBSan's pointer-overflow check, which
#             tripled their compile time: fuzz/CMakeLists.txt) from the seed
#             corpus fuzz/corpus for FUZZ_SECONDS (60) seconds
# In asan and memcheck, test_silu/test_sigmoid fill and compare at most 16384
# values a case (every element still computed and memory-checked; the full
# value checks are the plain C tests').
# Usage: scripts/hardening.sh [stage...]   (default: all four, in order)
# Duration on a 2-core Zen 3 guest at 2.45 GHz (AVX2): about 20 minutes
# (asan 5, tsan 1.5, memcheck 10, fuzz 3.5: its clang build 2.5). Every
# stage and step prints its start and duration, and a heartbeat
# (scripts/progress.sh) at least once a minute meanwhile.
# Env: FUZZ_SECONDS=60, JOBS=$(nproc), HARDENING_KEEP_GOING=1 (run every
# stage even after a failure), HARDENING_ALL_ISAS=1 (build every kernel
# pass). Exits non-zero when any stage fails. Stage timings and the fuzzer's
# numbers go to build-hardening/summary.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
. scripts/progress.sh
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
OUT=$ROOT/build-hardening
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(asan tsan memcheck fuzz)

heartbeat dependencies - bash scripts/install-deps.sh || exit 1

CC_CLANG=$(command -v clang-14 || command -v clang || true)
SYMBOLIZER=$(command -v llvm-symbolizer-14 || command -v llvm-symbolizer || true)
export ASAN_SYMBOLIZER_PATH=${SYMBOLIZER}
# The widest x86-64 kernel pass this CPU runs (src/cpu/cpu.c's detection,
# from the flags the kernel reports): every build here runs only on this
# machine, so it compiles the CPU kernels for the passes up to that one only
# (CMake's INFINIOP_CPU_MAX_ISA; a pass this CPU cannot execute would be
# compiled and instrumented for nothing). HARDENING_ALL_ISAS=1 builds all.
host_max_isa() {
  local f
  f=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
  local has_all=1
  for x in avx512f avx512dq avx512bw avx512vl; do [[ $f == *" $x "* ]] || has_all=0; done
  if [ $has_all = 1 ] && [[ $f == *" avx512_bf16 "* ]]; then echo avx512bf16
  elif [ $has_all = 1 ]; then echo avx512
  else echo avx2 # also below AVX2: that pass is built, the generic one runs
  fi
}
MAX_ISA=avx512bf16
[ "${HARDENING_ALL_ISAS:-0}" = 1 ] || MAX_ISA=$(host_max_isa)
COMMON_CMAKE=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFINIOP_CUDA=OFF -DINFINIOP_BUILD_BENCH=OFF
              -DINFINIOP_CPU_MAX_ISA="$MAX_ISA")

log() { printf '%s\n' "$*" | tee -a "$SUMMARY"; }

# configure DIR LOGNAME cmake-args...: configure quietly, show the log on failure.
configure() {
  local dir=$1 name=$2 t0=$SECONDS
  shift 2
  echo "   $name: configure ($dir)"
  heartbeat "$name configure" "$OUT/$name-configure.log" \
    cmake -S . -B "$dir" "$@" >"$OUT/$name-configure.log" 2>&1 || { cat "$OUT/$name-configure.log"; return 1; }
  echo "   $name: configured in $((SECONDS - t0)) s"
}
build() { # build DIR LOGNAME [targets...]
  local dir=$1 name=$2
  shift 2
  local t=() t0=$SECONDS
  for x in "$@"; do t+=(--target "$x"); done
  echo "   $name: build ($dir, log $OUT/$name-build.log)"
  heartbeat "$name build" "$OUT/$name-build.log" \
    cmake --build "$dir" -j"$JOBS" "${t[@]}" >"$OUT/$name-build.log" 2>&1 || { tail -50 "$OUT/$name-build.log"; return 1; }
  echo "   $name: built in $((SECONDS - t0)) s"
}

# ---------------------------------------------------------------- stages
stage_asan() {
  configure build-asan asan "${COMMON_CMAKE[@]}" -DINFINIOP_SANITIZE=ON || return 1
  build build-asan asan || return 1
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  INFINIOP_TEST_QUICK=1 INFINIOP_TEST_MEMCHECK=1 \
    ctest --test-dir build-asan -L cpu --output-on-failure -j"$JOBS" 2>&1 | tee "$OUT/asan-ctest.log" |
    grep --line-buffered -E "Test +#|tests passed|FAIL|ERROR|Sanitizer"
  local rc=${PIPESTATUS[0]}
  local n
  n=$(grep -cE "Test +#[0-9]+: .* Passed" "$OUT/asan-ctest.log")
  log "asan: $n test programs passed under ASan+UBSan+LSan (ctest -L cpu, quick)"
  return "$rc"
}

stage_tsan() {
  configure build-tsan tsan "${COMMON_CMAKE[@]}" -DCMAKE_BUILD_TYPE=Debug \
    "-DCMAKE_C_FLAGS=-fsanitize=thread -O1 -g" \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread || return 1
  local progs=()
  for p in test_threads_stress test_threads test_errors; do
    [ -f "tests/$p.c" ] && progs+=("$p")
  done
  build build-tsan tsan "${progs[@]}" || return 1
  local rc=0
  for p in "${progs[@]}"; do
    # halt_on_error: the first race fails the run; report_signal_unsafe=0:
    # the harness prints from signal-free code only, keep reports focused.
    echo "   tsan: $p"
    if OMP_NUM_THREADS=1 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:history_size=4 \
       INFINIOP_TEST_QUICK=1 heartbeat "tsan $p" - "build-tsan/tests/$p" --device cpu >"$OUT/tsan-$p.log" 2>&1; then
      log "tsan: $p clean ($(tail -1 "$OUT/tsan-$p.log"))"
    else
      rc=1
      tail -60 "$OUT/tsan-$p.log"
      log "tsan: $p FAILED (log: $OUT/tsan-$p.log)"
    fi
  done
  return $rc
}

# memcheck_one EXE: EXE under valgrind (the fuzz corpus for fuzz_replay);
# its exit status to $OUT/memcheck-NAME.rc, one line when it ends.
memcheck_one() {
  local exe=$1 name r t0=$SECONDS args=(--device cpu)
  name=$(basename "$exe")
  [ "$name" = fuzz_replay ] && args=(fuzz/corpus)
  # INFINIOP_TEST_UNDER_VALGRIND: the tests skip the checks whose
  # arithmetic valgrind changes (tests/common/testlib.h) and say so
  OMP_NUM_THREADS=2 INFINIOP_TEST_QUICK=1 INFINIOP_TEST_UNDER_VALGRIND=1 \
    "${VG[@]}" "$exe" "${args[@]}" >"$OUT/memcheck-$name.log" 2>&1
  r=$?
  echo $r >"$OUT/memcheck-$name.rc"
  if [ $r -eq 0 ]; then
    echo "   memcheck: $name clean in $((SECONDS - t0)) s$(grep -h "under valgrind:" "$OUT/memcheck-$name.log" |
      sed 's/^[^:]*: under valgrind: //' | paste -sd ';' | sed 's/;/; /g; s/^./ (&/; s/.$/&)/')"
  elif [ $r -eq 77 ]; then # GPU-only program, or one that checks arithmetic only: "skipped"
    echo "   memcheck: $name $(grep -h "skipped" "$OUT/memcheck-$name.log" | head -1 | sed 's/^[^:]*: //')"
  else
    echo "   memcheck: $name FAILED (exit $r) after $((SECONDS - t0)) s"
  fi
}
# memcheck_all EXE...: memcheck_one of each, $JOBS at a time.
memcheck_all() {
  local exe running=0
  for exe in "$@"; do
    if [ $running -ge "$JOBS" ]; then
      wait -n
      running=$((running - 1))
    fi
    memcheck_one "$exe" &
    running=$((running + 1))
  done
  wait
}

stage_memcheck() {
  # AVX2 at most even on an AVX-512 CPU: valgrind emulates no AVX-512 (its
  # CPUID hides it), so the library dispatches no wider pass under it.
  local isa=$MAX_ISA
  [ "${HARDENING_ALL_ISAS:-0}" = 1 ] || isa=avx2
  configure build-memcheck memcheck "${COMMON_CMAKE[@]}" -DINFINIOP_CPU_MAX_ISA=$isa || return 1
  build build-memcheck memcheck || return 1
  # The fuzz target, replaying the corpus without sanitizers or libFuzzer.
  echo "   memcheck: fuzz replay build"
  gcc -std=c11 -O1 -g -Iinclude fuzz/fuzz_ops.c fuzz/replay.c -o build-memcheck/fuzz_replay \
    -Lbuild-memcheck -linfiniop -linfinirt -Wl,-rpath,"$ROOT/build-memcheck" || return 1
  VG=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full
      --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect
      --suppressions="$ROOT/scripts/valgrind.supp" --num-callers=30 -q)
  # valgrind runs a program's threads one at a time: $JOBS programs run at
  # once, the slowest first (on a 2-core Zen 3 guest: add_rms_norm 303 s,
  # silu 169, sigmoid 154, layer_norm 90, causal_softmax 51, threads 44,
  # the rest under 10); each prints its line when it ends.
  local progs=() exe
  for exe in build-memcheck/tests/test_{add_rms_norm,silu,sigmoid,layer_norm,causal_softmax,threads} \
    build-memcheck/tests/test_*; do
    [ -x "$exe" ] || continue
    [[ " ${progs[*]} " == *" $exe "* ]] || progs+=("$exe")
  done
  progs+=(build-memcheck/fuzz_replay)
  rm -f "$OUT"/memcheck-*.rc
  heartbeat memcheck - memcheck_all "${progs[@]}"
  local rc=0 n=0 skipped=0 name r
  for exe in "${progs[@]}"; do
    name=$(basename "$exe")
    r=$(cat "$OUT/memcheck-$name.rc" 2>/dev/null || echo 1)
    if [ "$r" -eq 0 ]; then
      n=$((n + 1))
    elif [ "$r" -eq 77 ] && [ "$name" != fuzz_replay ]; then # GPU-only program, or one that checks arithmetic only
      skipped=$((skipped + 1))
    elif [ "$name" = fuzz_replay ]; then
      rc=1
      tail -60 "$OUT/memcheck-$name.log"
      log "memcheck: fuzz_replay FAILED (exit $r; log: $OUT/memcheck-$name.log)"
    elif [ "$r" -eq 99 ] || [ "$r" -ge 128 ]; then # memcheck errors, or killed by a signal
      rc=1
      tail -60 "$OUT/memcheck-$name.log"
      log "memcheck: $name FAILED: valgrind errors or a crash (exit $r; log: $OUT/memcheck-$name.log)"
    else # a check failed: the stage fails (checks valgrind changes are skipped, not failed)
      rc=1
      grep -h "FAIL" "$OUT/memcheck-$name.log" | head -20
      log "memcheck: $name FAILED: a check failed under valgrind (exit $r; log: $OUT/memcheck-$name.log)"
    fi
  done
  log "memcheck: $n programs clean under valgrind, $skipped skipped (GPU-only or arithmetic-only) ($(ls fuzz/corpus | wc -l) corpus inputs replayed)"
  return $rc
}

stage_fuzz() {
  [ -n "$CC_CLANG" ] || { log "fuzz: clang not found"; return 1; }
  local t0=$SECONDS
  echo "   fuzz: configure and build with $CC_CLANG (ASan + UBSan + libFuzzer; log $OUT/fuzz-build.log)"
  cmake -S fuzz -B build-fuzz -DCMAKE_C_COMPILER="$CC_CLANG" -DINFINIOP_CPU_MAX_ISA="$MAX_ISA" \
    >"$OUT/fuzz-configure.log" 2>&1 || { cat "$OUT/fuzz-configure.log"; return 1; }
  # the libraries and fuzz_ops only (memcheck builds its own fuzz_replay)
  heartbeat "fuzz build" "$OUT/fuzz-build.log" \
    cmake --build build-fuzz -j"$JOBS" --target fuzz_ops >"$OUT/fuzz-build.log" 2>&1 ||
    { tail -50 "$OUT/fuzz-build.log"; return 1; }
  echo "   fuzz: built in $((SECONDS - t0)) s; fuzzing for ${FUZZ_SECONDS} s"
  # New inputs go to a scratch corpus in the build dir, never into the repo;
  # crash reproducers to build-fuzz/artifacts/.
  mkdir -p build-fuzz/corpus build-fuzz/artifacts
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    heartbeat fuzz "$OUT/fuzz.log" build-fuzz/fuzz_ops -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -max_len=512 \
      -print_final_stats=1 -artifact_prefix=build-fuzz/artifacts/ \
      build-fuzz/corpus fuzz/corpus >"$OUT/fuzz.log" 2>&1
  local rc=$?
  local execs units cov
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/fuzz.log")
  units=$(ls build-fuzz/corpus | wc -l)
  cov=$(grep -oE "cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9a-zA-Z]+" "$OUT/fuzz.log" | tail -1)
  if [ $rc -ne 0 ]; then
    grep -vE "^#[0-9]+ +(NEW|REDUCE|pulse)" "$OUT/fuzz.log" | tail -60
    log "fuzz: FAILED after ${execs:-?} executions; reproducer in build-fuzz/artifacts/ (replay: build-fuzz/fuzz_ops FILE)"
    return $rc
  fi
  log "fuzz: ${FUZZ_SECONDS}s, ${execs} executions, clean; $(ls fuzz/corpus | wc -l) seeds, scratch corpus now ${units} inputs; ${cov}"
}

# ---------------------------------------------------------------- driver
failed=()
t_all=$SECONDS
for s in "${stages[@]}"; do
  echo "== hardening: $s (started $(date +%H:%M:%S))"
  t0=$SECONDS
  if "stage_$s"; then
    log "   $s: passed in $((SECONDS - t0)) s"
  else
    log "   $s: FAILED after $((SECONDS - t0)) s"
    failed+=("$s")
    [ "${HARDENING_KEEP_GOING:-0}" = 1 ] || break
  fi
done
log "hardening: $((SECONDS - t_all)) s in all"
if [ ${#failed[@]} -gt 0 ]; then
  echo "hardening: FAILED: ${failed[*]}"
  exit 1
fi
echo "hardening: all stages clean (summary: $SUMMARY)"
