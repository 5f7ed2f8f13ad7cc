#!/usr/bin/env bash
# test_install: the installed library as its users meet it.
#   1. `cmake --install` of the build tree to a temporary prefix;
#   2. the installed libinfiniop carries the run path $ORIGIN (it finds
#      libinfinirt beside it, wherever the prefix is);
#   3. tests/test_install_consumer built with find_package(infiniop) runs
#      with no loader environment (linked --as-needed, so only the library's
#      own run path can find libinfinirt);
#   4. the same program built with pkg-config, as the README says: with
#      PKG_CONFIG_PATH for the prefix, run once with LD_LIBRARY_PATH and once
#      linked with -rpath to the prefix's libdir (and --as-needed again).
# Each run checks the version macros against infiniopGetVersion(), the CPU
# instruction set name and one operator result.
# Usage: test_install.sh BUILD_DIR [CC] [CMAKE] [VERSION]   (exit 77: skipped)
set -euo pipefail
build=$1 cc=${2:-cc} cmake=${3:-cmake} version=${4:-}
src=$(cd "$(dirname "$0")" && pwd)/test_install_consumer
tmp=$(mktemp -d "${TMPDIR:-/tmp}/infiniop-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "test_install: FAILED: $*" >&2; exit 1; }
unset LD_LIBRARY_PATH PKG_CONFIG_PATH

"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
libdir=$(dirname "$(find "$prefix" -name 'libinfiniop.so' | head -1)")
[ -f "$libdir/libinfiniop.so" ] || fail "no libinfiniop.so under $prefix"
[ -f "$prefix/include/infiniop/version.h" ] || fail "infiniop/version.h was not installed"
[ ! -e "$prefix/include/infiniop/version.h.in" ] || fail "version.h.in was installed"
echo "installed to a temporary prefix: $(cd "$prefix" && find . -name '*.so*' -o -name '*.pc' -o -name '*Config.cmake' | sort | tr '\n' ' ')"

if command -v readelf >/dev/null; then
  for lib in libinfiniop.so libinfinirt.so; do
    rp=$(readelf -d "$libdir/$lib" | grep -E 'RUNPATH|RPATH' || true)
    echo "$lib: ${rp:-no run path}"
    case "$rp" in *'$ORIGIN'*) ;; *) fail "$lib has no \$ORIGIN run path" ;; esac
  done
fi

echo "-- find_package(infiniop)"
"$cmake" -S "$src" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_BUILD_TYPE=Release >"$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log"; fail "configuring the find_package consumer"; }
"$cmake" --build "$tmp/cm" >"$tmp/cmb.log" 2>&1 || { cat "$tmp/cmb.log"; fail "building the find_package consumer"; }
out=$("$tmp/cm/consumer" "$version") || fail "the find_package consumer did not run: $out"
echo "$out"
# Moving the whole prefix keeps it working ($ORIGIN, relative config files).
mv "$prefix" "$tmp/moved"
"$cmake" -S "$src" -B "$tmp/cm2" -DCMAKE_PREFIX_PATH="$tmp/moved" -DCMAKE_C_COMPILER="$cc" >"$tmp/cm2.log" 2>&1 \
  || { cat "$tmp/cm2.log"; fail "configuring against a moved prefix"; }
"$cmake" --build "$tmp/cm2" >"$tmp/cm2b.log" 2>&1 || { cat "$tmp/cm2b.log"; fail "building against a moved prefix"; }
"$tmp/cm2/consumer" "$version" >/dev/null || fail "the consumer of a moved prefix did not run"
mv "$tmp/moved" "$prefix"

echo "-- pkg-config"
if ! command -v pkg-config >/dev/null; then
  echo "test_install: pkg-config is not installed (scripts/install-deps.sh test installs it): skipped"
  exit 77
fi
export PKG_CONFIG_PATH=$libdir/pkgconfig
[ "$(pkg-config --modversion infiniop)" = "${version:-$(pkg-config --modversion infiniop)}" ] || fail "pkg-config --modversion"
# shellcheck disable=SC2046
"$cc" -std=c11 "$src/main.c" -o "$tmp/pc1" $(pkg-config --cflags --libs infiniop) -lm || fail "building with pkg-config"
out=$(LD_LIBRARY_PATH=$(pkg-config --variable=libdir infiniop) "$tmp/pc1" "$version") || fail "pkg-config consumer with LD_LIBRARY_PATH: $out"
echo "$out (LD_LIBRARY_PATH)"
# shellcheck disable=SC2046
"$cc" -std=c11 "$src/main.c" -o "$tmp/pc2" -Wl,--as-needed $(pkg-config --cflags --libs infiniop) -lm \
  -Wl,-rpath,"$(pkg-config --variable=libdir infiniop)" || fail "building with pkg-config and -rpath"
out=$("$tmp/pc2" "$version") || fail "pkg-config consumer with -rpath: $out"
echo "$out (-rpath)"
echo "test_install: passed"
