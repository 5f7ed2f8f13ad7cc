#!/usr/bin/env bash
# scripts/cuda-res-usage.sh - the registers and spill of every kernel
# instance of a CUDA build of the library, and what moved against a
# baseline. ptxas's register choices move with small source changes, and a
# few registers more can cost a row kernel a resident block an SM (a whole
# wave of latency-bound rows: bench/NOTES.md, session 31); this shows such
# moves on a machine without a GPU, before the GPU does.
#
#   scripts/cuda-res-usage.sh [LIB] [BASELINE]
#
# LIB: the library (default build-gpu/libinfiniop.so). Prints one line per
# kernel instance, "REG STACK name" (mangled), sorted by name. With
# BASELINE (such a listing, e.g. bench/cuda-res-usage-sm90.txt, that of
# the last commit measured on a GPU), prints instead the instances whose
# registers or stack changed, and a count (lines starting with # are
# comments). To refresh the baseline after a GPU measurement:
#   { echo "# <commit>, sm_90, nvcc <version>"; scripts/cuda-res-usage.sh; } > bench/cuda-res-usage-sm90.txt
# cuobjdump: $CUOBJDUMP, else the
# CUDA toolkit's, else PyPI's nvidia-cuda-cuobjdump wheel fetched once into
# build-res-usage/ (no CUDA install needed).
set -euo pipefail
cd "$(dirname "$0")/.."
LIB=${1:-build-gpu/libinfiniop.so}
BASE=${2:-}
[ -f "$LIB" ] || { echo "cuda-res-usage: no library at $LIB (build with -DINFINIOP_CUDA=ON)" >&2; exit 2; }
CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump || true)}
if [ -z "$CUOBJDUMP" ]; then
  d=build-res-usage
  if [ ! -x $d/nvidia/cu13/bin/cuobjdump ]; then
    mkdir -p $d
    python3 -m pip download -q --no-deps -d $d nvidia-cuda-cuobjdump >&2
    python3 -c "import zipfile,glob,sys; zipfile.ZipFile(glob.glob(sys.argv[1]+'/nvidia_cuda_cuobjdump-*.whl')[0]).extractall(sys.argv[1])" $d
    chmod +x $d/nvidia/cu13/bin/cuobjdump
  fi
  CUOBJDUMP=$d/nvidia/cu13/bin/cuobjdump
fi
list() {
  "$CUOBJDUMP" -res-usage "$1" 2>/dev/null | awk '
    /^ *Function [^ ]+:/ { name = $2; sub(/:$/, "", name); next }
    name != "" && /REG:/ {
      reg = $0; sub(/.*REG:/, "", reg); sub(/ .*/, "", reg)
      st = $0; sub(/.*STACK:/, "", st); sub(/ .*/, "", st)
      print reg, st, name; name = "" }' | sort -k3
}
if [ -z "$BASE" ]; then list "$LIB"; exit 0; fi
list "$LIB" | awk '/^#/ { next }
  NR == FNR { base[$3] = $1 " " $2; next }
  { now[$3] = $1 " " $2 }
  END {
    n = 0
    for (k in now) if (k in base && base[k] != now[k]) { split(base[k], b, " "); split(now[k], c, " ");
      printf "%3d -> %3d regs, %3d -> %3d stack  %s\n", b[1], c[1], b[2], c[2], k; ++n }
    for (k in now) if (!(k in base)) { printf "new: %s %s\n", now[k], k; ++n }
    for (k in base) if (!(k in now)) { printf "gone: %s %s\n", base[k], k; ++n }
    printf "cuda-res-usage: %d of %d instances differ from the baseline\n", n, length(now)
  }' "$BASE" -
