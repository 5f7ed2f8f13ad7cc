#!/bin/sh
# Install the Debian packages the build and the benchmark use; idempotent,
# non-interactive, quiet when everything is there. Run as root (CI) or with
# sudo. Nothing here is required to build the library itself:
#   libdnnl-dev  oneDNN, optional peer timings in infiniop-bench (CPU)
set -eu
PKGS="libdnnl-dev"

missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo -n"
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1; then
    $SUDO apt-get update -q >/dev/null 2>&1 || true
    # optional packages: a failure leaves the build as it is (without them)
    $SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1 ||
        echo "install-deps: could not install:$missing (optional; continuing)" >&2
fi
exit 0
