#!/bin/sh
# The CPU benchmark with its peers, in one run: infiniop-bench (paired
# rounds against a copy of the same bytes; oneDNN column when built with
# it), the PyTorch eager / torch.compile peers (bench/cpu_peers.py, when
# torch imports: ours runs in the same rounds through the Python package),
# and with --sweep the working-set and thread sweep with its JSON and chart
# (bench/cpu_scaling_plot.py).
#   bench/cpu_bench.sh [--sweep] [BUILD_DIR] [OUT_DIR]
# BUILD_DIR defaults to build-cpu (scripts/bench.sh's CPU build).
# PYTHON picks the interpreter (default: /work/venv/bin/python if present, else python3).
set -e
SWEEP=0
if [ "$1" = "--sweep" ]; then SWEEP=1; shift; fi
BUILD=${1:-build-cpu}
OUT=${2:-$BUILD/bench-cpu}
HERE=$(dirname "$0")
PY=${PYTHON:-python3}
[ -z "$PYTHON" ] && [ -x /work/venv/bin/python ] && PY=/work/venv/bin/python
mkdir -p "$OUT"
"$BUILD/bench/infiniop-bench" --json "$OUT/bench.json" | tee "$OUT/bench.txt"
if "$PY" -c "import torch" 2>/dev/null; then
  "$PY" "$HERE/cpu_peers.py" --lib "$BUILD" --ours "$OUT/bench.json" --json "$OUT/peers.json" | tee "$OUT/peers.txt"
else
  echo "(no torch for $PY: PyTorch peers skipped)"
fi
if [ $SWEEP = 1 ]; then
  "$BUILD/bench/infiniop-bench" --sweep --json "$OUT/sweep.json" | tee "$OUT/sweep.txt"
  "$PY" "$HERE/cpu_scaling_plot.py" "$OUT/sweep.json" "$OUT/sweep.png" || echo "(no matplotlib: chart skipped)"
fi
