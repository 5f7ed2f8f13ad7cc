#!/usr/bin/env bash
# Build infiniop-c once and run every test stage on this machine:
#   1. system packages the build needs (scripts/install-deps.sh; root only)
#   2. configure and build (CUDA backend too when nvcc is present) in build/
#   3. the C test suite (CTest; GPU tests report "skipped: no GPU" without one)
#   4. the Python package's tests (pytest, in a virtual environment build/venv
#      with PyTorch; with INFINIOP_QUICK unset also a fresh-venv `pip install`
#      that builds the package), the GPU sweep's case generator (bench/),
#      then the example decoder (examples/)
#   5. hardening: sanitizer builds, fuzzing, thread and memory checks
#      (scripts/hardening.sh; skipped with INFINIOP_QUICK=1)
# Usage: scripts/test.sh            (from anywhere; exits non-zero on failure)
# Duration on a 2-core VM without GPU: 35-40 minutes (a quiet Zen 3 guest
# at 2.45 GHz, 2266 s: the CUDA build 11, the Python tests with the
# fresh-venv install 5, hardening 19 of them); INFINIOP_QUICK=1 (no
# hardening, no fresh-venv install) about 12 minutes.
# Every stage prints its start and its duration; nothing stays silent for
# more than about a minute (scripts/progress.sh: heartbeat).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
. scripts/progress.sh
T_ALL=$SECONDS
trap 'rc=$?; [ $rc -ne 0 ] && [ -n "${STAGE_NAME:-}" ] && echo "== $STAGE_NAME: FAILED after $((SECONDS - STAGE_T0)) s (exit $rc)"' EXIT

stage_begin dependencies
heartbeat "dependencies" - bash scripts/install-deps.sh test
stage_end

stage_begin build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >build-configure.log 2>&1 || { cat build-configure.log; exit 1; }
grep -E "infiniop:" build-configure.log || true
heartbeat build - cmake --build build -j"$JOBS"
stage_end

stage_begin "C tests"
heartbeat "C tests" - ctest --test-dir build --output-on-failure -j"$JOBS"
stage_end

stage_begin "Python tests"
# build/venv: kept between runs in this checkout. PyTorch (the torch.library
# operators, torch.compile, the example) comes from PyPI; its Linux wheel
# brings the CUDA libraries with it (~3 GB download, ~5 GB installed, about
# 2 minutes on a fresh machine; nothing to do when build/venv has it).
# INFINIOP_NO_TORCH=1 skips it (the torch tests then report skipped).
if [ ! -x build/venv/bin/python ]; then
  python3 -m venv build/venv
fi
PIP=(build/venv/bin/python -m pip install -q --disable-pip-version-check)
heartbeat "pip install -r python/requirements-test.txt" - "${PIP[@]}" -r python/requirements-test.txt
if [ "${INFINIOP_NO_TORCH:-0}" != 1 ] && ! build/venv/bin/python -c "import torch" 2>/dev/null; then
  echo "installing torch into build/venv (PyPI wheel with its CUDA libraries: ~3 GB download, ~2 min)"
  t0=$(date +%s)
  heartbeat "pip install torch" - "${PIP[@]}" torch
  echo "torch $(build/venv/bin/python -c 'import torch; print(torch.__version__)') installed in $(( $(date +%s) - t0 )) s"
fi
# The package's Python files only (wheel.cmake=false): the tests use the
# libraries of build/ (INFINIOP_LIBRARY_PATH). The full `pip install` that
# builds them is python/tests/test_install.py (INFINIOP_TEST_INSTALL=1).
heartbeat "pip install ./python" - "${PIP[@]}" --no-deps -C wheel.cmake=false ./python
if [ "${INFINIOP_QUICK:-0}" != 1 ]; then export INFINIOP_TEST_INSTALL=${INFINIOP_TEST_INSTALL:-1}; fi
INFINIOP_LIBRARY_PATH="$PWD/build" heartbeat pytest - build/venv/bin/python -m pytest -q python/tests
stage_end

stage_begin "GPU shape sweep: case generator (and a CPU run of a few cases)"
INFINIOP_LIBRARY_PATH="$PWD/build" heartbeat pytest - \
  build/venv/bin/python -m pytest -q -p no:cacheprovider bench/test_gpu_sweep.py
stage_end

stage_begin "example (examples/decoder.py: PyTorch vs infiniop operators)"
INFINIOP_LIBRARY_PATH="$PWD/build" heartbeat decoder - build/venv/bin/python examples/decoder.py --quick
stage_end

if [ "${INFINIOP_QUICK:-0}" != 1 ] && [ -f scripts/hardening.sh ]; then
  stage_begin hardening
  bash scripts/hardening.sh
  stage_end
fi
echo "== all test stages passed in $((SECONDS - T_ALL)) s"
