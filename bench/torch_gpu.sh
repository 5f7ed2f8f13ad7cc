#!/usr/bin/env bash
# The PyTorch binding on a GPU machine, in one command (issue 20): takes a
# wheel built on another machine (CUDA backend, native binding; e.g.
#   pip wheel ./python -w .whl --no-deps -C cmake.define.INFINIOP_CUDA=ON \
#       -C cmake.define.INFINIOP_CUDA_ARCHITECTURES=90
# ), unpacks it outside the source tree, and with LD_LIBRARY_PATH unset:
#   1. what its libraries link (ldd: no libcudart, no toolkit path) and
#      whether the native operators load with this machine's PyTorch;
#   2. the CUDA Python tests (and opcheck, the native-binding tests);
#   3. bench/torch_overhead.py (CPU and CUDA host time per call);
#   4. examples/decoder.py --device cuda (eager, compile, reduce-overhead) at
#      its default size and at --dim 4096 --heads 32 --ffn 11008 --layers 4.
# Each step has its own time limit, so a slow one leaves the rest their time;
# the whole takes about 8 minutes on an H100 machine (each decoder run
# compiles 8 graphs, about 20 s a set).
# Logs go to $OUT (default /tmp/torch_gpu). Usage: bench/torch_gpu.sh WHEEL
set -u
W=${1:?usage: bench/torch_gpu.sh WHEEL}
OUT=${OUT:-/tmp/torch_gpu}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
SITE=/tmp/infiniop_wheel
rm -rf "$SITE" && "$PY" -m zipfile -e "$W" "$SITE"
export PYTHONPATH=$SITE
unset LD_LIBRARY_PATH INFINIOP_LIBRARY_PATH
step() { local name=$1 limit=$2; shift 2; local t0=$SECONDS
  echo "== $name (limit ${limit}s): $*" | tee -a "$OUT/summary.txt"
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1; local rc=$?
  echo "   rc=$rc in $((SECONDS - t0)) s" | tee -a "$OUT/summary.txt"; tail -n 40 "$OUT/$name.log"; }
{
  nvidia-smi -L; "$PY" -c 'import torch, sys; print(sys.version.split()[0], "torch", torch.__version__, torch.version.cuda, torch.cuda.get_device_name())'
  echo "-- ldd of the wheel's libraries (LD_LIBRARY_PATH unset)"; for f in "$SITE"/infiniop/lib/*.so; do echo "$f"; ldd "$f"; done
  echo "-- run paths"; for f in "$SITE"/infiniop/lib/*.so; do readelf -d "$f" | grep -E "RUNPATH|RPATH|NEEDED"; done
  "$PY" -c 'import torch, infiniop, infiniop.torch_ops as t; print("native:", infiniop._native.info(), "cuda devices:", infiniop.device_count())'
} >"$OUT/env.log" 2>&1
cat "$OUT/env.log"
step tests 150 "$PY" -m pytest -q -p no:cacheprovider python/tests/test_torch_ops.py python/tests/test_torch.py python/tests/test_native.py -k "cuda or native or overhead"
step overhead 60 "$PY" bench/torch_overhead.py --device all --calls 2000 --repeats 5
step decoder_default 240 "$PY" -u examples/decoder.py --device cuda --repeats 2
step decoder_large 300 "$PY" -u examples/decoder.py --device cuda --repeats 2 --dim 4096 --heads 32 --ffn 11008 --layers 4
