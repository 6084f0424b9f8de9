#!/usr/bin/env bash
# Builds the Debian package attnscope_<version>_<arch>.deb into build-package/ (or
# $ATTNSCOPE_PACKAGE_DIR) and checks it with lintian. Install it with
#   sudo apt install ./build-package/attnscope_<version>_<arch>.deb
# Its own build folder, because a package differs from a developer build: it runs on any x86-64 CPU
# (no -march=native), is installed under /usr (the compiled-in assets folder is /usr/share/attnscope),
# and is compiled with Debian's hardening flags (dpkg-buildflags). Extra arguments go to cmake.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/install_deps.sh" "$root/scripts/deps-package.txt"
build=${ATTNSCOPE_PACKAGE_DIR:-$root/build-package}
mkdir -p "$build"
# Debian's flags: stack protector, _FORTIFY_SOURCE, read-only relocations; the build type's -O3 stays.
# -ffile-prefix-map keeps the build folder's path out of the program. No -g: cpack strips the program,
# and debug information would only slow the build.
cd "$root"
export DEB_BUILD_MAINT_OPTIONS="hardening=+all"
no_g() { sed -E 's/(^| )-g( |$)/ /'; }
CPPFLAGS="$(dpkg-buildflags --get CPPFLAGS)"  # _FORTIFY_SOURCE; cmake reads no CPPFLAGS, so it joins both
CFLAGS="$CPPFLAGS $(dpkg-buildflags --get CFLAGS | no_g)"
CXXFLAGS="$CPPFLAGS $(dpkg-buildflags --get CXXFLAGS | no_g)"
LDFLAGS="$(dpkg-buildflags --get LDFLAGS)"
export CFLAGS CXXFLAGS LDFLAGS
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DATTNSCOPE_NATIVE=OFF \
  -DATTNSCOPE_BUILD_TESTS=OFF -DATTNSCOPE_BUILD_BENCH=OFF "$@" >"$build/configure.log" ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" >"$build/build.log" 2>&1 ||
  { tail -40 "$build/build.log"; echo "error: the build failed (log: $build/build.log)" >&2; exit 1; }
rm -f "$build"/attnscope_*.deb
(cd "$build" && cpack -G DEB >"$build/cpack.log" 2>&1) ||
  { tail -40 "$build/cpack.log"; echo "error: cpack failed (log: $build/cpack.log)" >&2; exit 1; }
deb=$(ls "$build"/attnscope_*.deb)
echo "== lintian $deb"
lintian --fail-on error --info "$deb" || { echo "error: lintian found errors in $deb" >&2; exit 1; }
echo "built $deb"
echo "install it with:  sudo apt install $deb"
