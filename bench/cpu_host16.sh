#!/bin/sh
# The paired CPU bench on a many-core host (written for the GPU machine's
# 16-core AVX-512 Xeon with a 300 MiB L3): builds the CPU library only, then
# runs every case at 2 and 16 threads on DRAM-sized sets (>= 4x the
# last-level cache), each paired round by round with a copy of the same
# bytes and threads (and oneDNN when libdnnl-dev is installed). About 3
# minutes there; tables and JSON go to $OUT (default ./out).
#   bench/cpu_host16.sh
# Environment: OUT, THREADS (default 2,16), ISAS (kernel sets, default
# "native"; e.g. "native avx2" adds INFINIOP_CPU_ISA=avx2), TIME_CAP
# (seconds of rounds per case and thread count, default 2), ROUNDS (least
# rounds, default 5), LLC_MIB (default: the host's, from sysfs), CASES
# (a substring of the case names, default all), JOBS (build, default nproc).
set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-./out}
THREADS=${THREADS:-2,16}
ISAS=${ISAS:-native}
TIME_CAP=${TIME_CAP:-2}
ROUNDS=${ROUNDS:-5}
JOBS=${JOBS:-$(nproc)}
BUILD=${BUILD:-build-host16}
mkdir -p "$OUT"
start=$(date +%s)
{ lscpu; nproc; free -g; } >"$OUT/machine.txt" 2>&1 || true
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DINFINIOP_CUDA=OFF >"$OUT/configure.log" 2>&1 ||
  { tail -20 "$OUT/configure.log"; exit 1; }
cmake --build "$BUILD" -j"$JOBS" --target infiniop-bench >"$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }
echo "built in $(($(date +%s) - start)) s"
set -- --sweep --sets dram --threads "$THREADS" --time-cap "$TIME_CAP" --reps "$ROUNDS" --copy-mib 2048
[ -n "${LLC_MIB:-}" ] && set -- "$@" --llc-mib "$LLC_MIB"
[ -n "${CASES:-}" ] && set -- "$@" --case "$CASES"
rc=0
for isa in $ISAS; do
  if [ "$isa" = native ]; then
    env -u INFINIOP_CPU_ISA "$BUILD/bench/infiniop-bench" "$@" --json "$OUT/dram-$isa.json" >"$OUT/dram-$isa.txt" 2>&1 || rc=$?
  else
    INFINIOP_CPU_ISA=$isa "$BUILD/bench/infiniop-bench" "$@" --json "$OUT/dram-$isa.json" >"$OUT/dram-$isa.txt" 2>&1 || rc=$?
  fi
  cat "$OUT/dram-$isa.txt"
done
echo "total $(($(date +%s) - start)) s"
exit $rc
