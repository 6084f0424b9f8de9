#!/usr/bin/env bash
# The browser build's tests (scripts/test.sh's browser stage): tests/web/test_web.mjs in Debian's
# chromium, headless, driven through playwright-core from npm.
#   tests/web/run.sh SITE_DIR [DESKTOP_ATTNSCOPE]
#   tests/web/run.sh --node SCRIPT.mjs [ARGS…]   another module in the same folder (bench/web_figures.sh)
# SITE_DIR is scripts/build-web.sh's build-web/site; DESKTOP_ATTNSCOPE is the desktop CLI (default:
# build/app/attnscope) whose export the page's heatmap must equal.
# 1. installs playwright-core at a pinned version into a cache folder OUTSIDE the repository
#    (${ATTNSCOPE_WEB_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnscope/web-test}), only if missing;
# 2. runs the checks from a scratch folder whose node_modules is a link to that cache: ES modules do
#    not honour NODE_PATH, and `import 'playwright-core'` resolves from the importing file's folders.
# The exit code is the number of failed checks (or 1 when the stage cannot start). If playwright-core is
# not cached and the npm registry cannot be reached, this FAILS: the stage is never skipped.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
script=""
if [[ "${1:-}" == --node ]]; then
  script=$(realpath "${2:?usage: run.sh --node SCRIPT.mjs [ARGS…]}")
  shift 2
else
  [[ -d "${1:?usage: run.sh SITE_DIR [DESKTOP_ATTNSCOPE]}" ]] || { echo "error: web tests: no folder $1 (scripts/build-web.sh builds build-web/site)" >&2; exit 1; }
  site=$(cd "$1" && pwd)
  desktop=${2:-$root/build/app/attnscope}
fi
cache=${ATTNSCOPE_WEB_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnscope/web-test}
version=1.40.1

fail() { echo "error: web tests: $*" >&2; exit 1; }
if [[ -z "$script" ]]; then
  [[ -f "$site/index.html" && -f "$site/attnscope.wasm" ]] || fail "$site is not a built site (run scripts/build-web.sh)"
  [[ -x "$desktop" ]] || fail "no desktop attnscope at $desktop (run scripts/build.sh, or give its path)"
fi
command -v chromium >/dev/null || "$root/scripts/install_deps.sh" "$root/scripts/deps-web.txt" || fail "could not install chromium"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  "$root/scripts/install_deps.sh" "$root/scripts/deps-npm.txt" || fail "could not install nodejs and npm"
fi
[[ "$cache" != "$root"* ]] || fail "the npm cache $cache must lie outside the repository $root"

installed() {
  [[ -f "$cache/node_modules/playwright-core/package.json" ]] &&
    [[ "$(node -p "require('$cache/node_modules/playwright-core/package.json').version")" == "$version" ]]
}
if ! installed; then
  echo "installing playwright-core@$version into $cache"
  mkdir -p "$cache"
  [[ -f "$cache/package.json" ]] || echo '{"name": "attnscope-web-test", "private": true}' >"$cache/package.json"
  npm install --prefix "$cache" --no-audit --no-fund --loglevel=error "playwright-core@$version" ||
    fail "npm could not install playwright-core@$version: the npm registry must be reachable (or the package cached in $cache)"
  installed || fail "npm ran but playwright-core@$version is not in $cache/node_modules"
fi

# A scratch folder per run: the test modules beside a node_modules link to the cache.
work=$(mktemp -d "${TMPDIR:-/tmp}/attnscope-web-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$here"/*.mjs "$work/"
ln -s "$cache/node_modules" "$work/node_modules"
status=0
if [[ -n "$script" ]]; then
  cp "$script" "$work/"
  node "$work/$(basename "$script")" "$@" || status=$?
  exit $status
fi
ATTNSCOPE_DESKTOP="$desktop" ATTNSCOPE_WEB_WORK="$work" node "$work/test_web.mjs" "$site" || status=$?
exit $status
