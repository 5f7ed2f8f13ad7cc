#!/usr/bin/env bash
# Install the Debian packages the build and tests need, when missing.
# Idempotent; needs root (or sudo) only when something is missing.
set -euo pipefail
pkgs=(cmake gcc g++ make python3 python3-venv)
# scripts/hardening.sh: libFuzzer and sanitizer runtimes (clang-14,
# libclang-rt-14-dev), OpenMP for clang (libomp-14-dev), the symbolizer
# (llvm-14), valgrind.
pkgs+=(clang-14 libclang-rt-14-dev libomp-14-dev llvm-14 valgrind)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
