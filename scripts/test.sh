#!/usr/bin/env bash
# Build infiniop-c once and run every test stage on this machine:
#   1. system packages the build needs (scripts/install-deps.sh; root only)
#   2. configure and build (CUDA backend too when nvcc is present) in build/
#   3. the C test suite (CTest; GPU tests report "skipped: no GPU" without one)
#   4. the Python package's tests (pytest, in a virtual environment build/venv)
#   5. hardening: sanitizer builds, fuzzing, thread and memory checks
#      (scripts/hardening.sh; skipped with INFINIOP_QUICK=1)
# Usage: scripts/test.sh            (from anywhere; exits non-zero on failure)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}

echo "== dependencies"
bash scripts/install-deps.sh

echo "== build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >build-configure.log 2>&1 || { cat build-configure.log; exit 1; }
grep -E "infiniop:" build-configure.log || true
cmake --build build -j"$JOBS"

echo "== C tests"
ctest --test-dir build --output-on-failure -j"$JOBS"

echo "== Python tests"
if [ ! -x build/venv/bin/python ]; then
  python3 -m venv build/venv
fi
build/venv/bin/python -m pip install -q --disable-pip-version-check -r python/requirements-test.txt
build/venv/bin/python -m pip install -q --disable-pip-version-check --no-deps ./python
INFINIOP_LIBRARY_PATH="$PWD/build" build/venv/bin/python -m pytest -q python/tests

if [ "${INFINIOP_QUICK:-0}" != 1 ] && [ -f scripts/hardening.sh ]; then
  echo "== hardening"
  bash scripts/hardening.sh
fi
echo "== all test stages passed"
