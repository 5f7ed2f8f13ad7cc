#!/usr/bin/env bash
# Install the Debian packages a job needs, when missing. Idempotent,
# non-interactive, quiet when everything is there; says what it installs.
#   install-deps.sh bench   the main job (scripts/bench.sh): cmake gcc make;
#                           optional libdnnl-dev (oneDNN, peer timings in
#                           infiniop-bench; a failure to install it is not one)
#   install-deps.sh test    (the default) scripts/test.sh: the bench set, plus
#                           g++ python3 python3-venv pkg-config (the C and
#                           Python tests, the install test); for
#                           scripts/hardening.sh libFuzzer and sanitizer
#                           runtimes (clang-14, libclang-rt-14-dev), OpenMP for
#                           clang (libomp-14-dev), the symbolizer (llvm-14),
#                           valgrind
# Installing needs root or password-less sudo; without either, it names the
# missing packages and the command that installs them, and fails.
set -euo pipefail
set_name=${1:-test}
case "$set_name" in
  bench)
    required=(cmake gcc make)
    ;;
  test)
    required=(cmake gcc make g++ python3 python3-venv pkg-config)
    required+=(clang-14 libclang-rt-14-dev libomp-14-dev llvm-14 valgrind)
    ;;
  *)
    echo "usage: $0 [bench|test]" >&2
    exit 2
    ;;
esac
optional=(libdnnl-dev)

missing_of() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps: not a Debian/Ubuntu system; install by hand: ${required[*]} (optional: ${optional[*]})" >&2
  exit 0
fi
mapfile -t need < <(missing_of "${required[@]}")
mapfile -t want < <(missing_of "${optional[@]}")
[ ${#need[@]} -eq 0 ] && [ ${#want[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
    SUDO="sudo -n"
  else
    if [ ${#need[@]} -gt 0 ]; then
      echo "install-deps ($set_name): missing packages: ${need[*]}" >&2
      echo "  not root and no password-less sudo: install them with" >&2
      echo "    sudo apt-get install ${need[*]}" >&2
      echo "  (as root: apt-get update && apt-get install ${need[*]}), then run this again." >&2
      exit 1
    fi
    echo "install-deps ($set_name): optional ${want[*]} not installed (not root, no sudo); continuing" >&2
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
updated=0
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps ($set_name): installing ${need[*]}"
  $SUDO apt-get update -qq
  updated=1
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ ${#want[@]} -gt 0 ]; then
  echo "install-deps ($set_name): installing optional ${want[*]}"
  if ! $SUDO apt-get install -y -q --no-install-recommends "${want[@]}" >/dev/null 2>&1; then
    [ $updated = 1 ] || $SUDO apt-get update -q >/dev/null 2>&1 || true
    $SUDO apt-get install -y -q --no-install-recommends "${want[@]}" >/dev/null 2>&1 ||
      echo "install-deps: could not install: ${want[*]} (optional; continuing)" >&2
  fi
fi
exit 0
