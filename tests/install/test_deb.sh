#!/usr/bin/env bash
# Builds the .deb from this build folder's binaries (cpack, no second build), checks its file list
# and control fields, validates the desktop entry and the AppStream metainfo inside it, runs the
# unpacked program, and has lintian check the package (errors fail; warnings are printed).
#   test_deb.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 src=$2 work=$3
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAILED: $*" >&2; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

for tool in cpack dpkg-deb dpkg-shlibdeps lintian desktop-file-validate appstreamcli; do
  command -v "$tool" >/dev/null ||
    { echo "error: $tool is missing: scripts/install_deps.sh scripts/deps-package.txt installs it" >&2; exit 1; }
done
rm -rf "$work"
mkdir -p "$work"
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work" >"$work/cpack.log" 2>&1 ||
  { tail -30 "$work/cpack.log" >&2; echo "error: cpack failed (log: $work/cpack.log)" >&2; exit 1; }
shopt -s nullglob
debs=("$work"/attnscope_*.deb)
[[ ${#debs[@]} -eq 1 ]] || { echo "error: expected one attnscope_*.deb in $work, found ${#debs[@]}" >&2; exit 1; }
deb=${debs[0]}
version=$(sed -n 's/^project(attnscope VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
check "named attnscope_${version}_$(dpkg --print-architecture).deb" \
  test "$(basename "$deb")" = "attnscope_${version}_$(dpkg --print-architecture).deb"

# 1. Exactly these files.
{
  echo ./usr/bin/attnscope
  (cd "$src/assets" && find . -type f | sed 's|^\./|./usr/share/attnscope/|')
  echo ./usr/share/applications/attnscope.desktop
  echo ./usr/share/doc/attnscope/changelog.gz
  echo ./usr/share/doc/attnscope/copyright
  for n in 16 24 32 48 64 128 256 512; do echo "./usr/share/icons/hicolor/${n}x${n}/apps/attnscope.png"; done
  echo ./usr/share/icons/hicolor/scalable/apps/attnscope.svg
  echo ./usr/share/man/man1/attnscope.1.gz
  echo ./usr/share/metainfo/io.github.attnscope.attnscope.metainfo.xml
} | sort >"$work/expected.txt"
dpkg-deb --fsys-tarfile "$deb" | tar -t | grep -v '/$' | sort >"$work/files.txt"
check "the package holds exactly the expected files" diff -u "$work/expected.txt" "$work/files.txt"
# Files root-owned, folders 755, the program 755, the rest 644.
check "every entry belongs to root" bash -c "! dpkg-deb -c '$deb' | awk '{print \$2}' | grep -v '^root/root$'"
check "modes: folders 755, the program 755, data 644" bash -c "
  dpkg-deb -c '$deb' | awk '{ m = \$1; p = \$6;
    want = (p ~ /\/\$/ || p == \"./usr/bin/attnscope\") ? (p ~ /\/\$/ ? \"drwxr-xr-x\" : \"-rwxr-xr-x\") : \"-rw-r--r--\";
    if (m != want) { print p, m, \"want\", want; bad = 1 } } END { exit bad }'"

# 2. Control fields: the dependencies come from dpkg-shlibdeps.
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libc6 libstdc++6 libglfw3 libfontconfig1; do
  check "Depends names $lib" grep -q "\b$lib\b" <<<"$depends"
done
check "Package: attnscope" test "$(dpkg-deb -f "$deb" Package)" = attnscope
check "Version: $version" test "$(dpkg-deb -f "$deb" Version)" = "$version"
check "the changelog's top entry is this version" grep -q "^attnscope ($version) " <(zcat -f "$src/packaging/changelog")

# 3. The validators on the unpacked files, and the unpacked program finds its assets.
root="$work/root"
dpkg-deb -x "$deb" "$root"
check "desktop-file-validate" desktop-file-validate "$root/usr/share/applications/attnscope.desktop"
check "appstreamcli validate" appstreamcli validate --no-net "$root/usr/share/metainfo/io.github.attnscope.attnscope.metainfo.xml"
check "the metainfo's release is this version" grep -q "<release version=\"$version\"" \
  "$root/usr/share/metainfo/io.github.attnscope.attnscope.metainfo.xml"
check "the program is stripped" bash -c "file '$root/usr/bin/attnscope' | grep -q ', stripped'"
check "the unpacked program runs: --version" "$root/usr/bin/attnscope" --version
check "the unpacked program finds the presets" \
  env -u ATTNSCOPE_ASSETS --chdir="$work" "$root/usr/bin/attnscope" kv-cache --model mistral-7b --seq 8192

# 4. lintian: no error. Warnings are printed and pass (a test build, unlike scripts/package.sh's, is
#    not built with Debian's hardening flags).
set +e
lintian --fail-on error --tag-display-limit 0 "$deb" >"$work/lintian.txt" 2>&1
code=$?
set -e
cat "$work/lintian.txt"
check "lintian finds no error (exit $code)" test "$code" = 0
check "lintian printed no E: tag" bash -c "! grep -q '^E:' '$work/lintian.txt'"

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
