#!/usr/bin/env bash
# Install the Debian packages the build, the tests and the benchmark use, when
# missing. Idempotent, non-interactive, quiet when everything is there; needs
# root (CI) or sudo only when something is missing.
#   required  the build and tests: cmake gcc g++ make python3 python3-venv;
#             scripts/hardening.sh: libFuzzer and sanitizer runtimes (clang-14,
#             libclang-rt-14-dev), OpenMP for clang (libomp-14-dev), the
#             symbolizer (llvm-14), valgrind
#   optional  libdnnl-dev: oneDNN, peer timings in infiniop-bench (CPU); a
#             failure to install it leaves the build as it is
set -euo pipefail
required=(cmake gcc g++ make python3 python3-venv)
required+=(clang-14 libclang-rt-14-dev libomp-14-dev llvm-14 valgrind)
optional=(libdnnl-dev)

missing_of() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
mapfile -t need < <(missing_of "${required[@]}")
mapfile -t want < <(missing_of "${optional[@]}")
[ ${#need[@]} -eq 0 ] && [ ${#want[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo -n"
export DEBIAN_FRONTEND=noninteractive
updated=0
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  $SUDO apt-get update -qq
  updated=1
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ ${#want[@]} -gt 0 ]; then
  if ! $SUDO apt-get install -y -q --no-install-recommends "${want[@]}" >/dev/null 2>&1; then
    [ $updated = 1 ] || $SUDO apt-get update -q >/dev/null 2>&1 || true
    $SUDO apt-get install -y -q --no-install-recommends "${want[@]}" >/dev/null 2>&1 ||
      echo "install-deps: could not install: ${want[*]} (optional; continuing)" >&2
  fi
fi
exit 0
