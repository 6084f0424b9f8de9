#!/usr/bin/env bash
# Debian's source packages of Dear ImGui 1.86, PCRE2 and utf8proc, which the browser build compiles
# (Debian ships ImGui's backends, PCRE2 and utf8proc only as native libraries). Unpacked once into a
# cache folder outside the repository, by `apt-get source` from a deb-src entry for bookworm that this
# script adds when there is none. Prints the folder.
#   usage: scripts/web-sources.sh   (ATTNSCOPE_WEB_SOURCES chooses the folder)
set -euo pipefail
dest=${ATTNSCOPE_WEB_SOURCES:-${XDG_CACHE_HOME:-$HOME/.cache}/attnscope/web-sources}
packages=(imgui pcre2 utf8proc)
missing=()
for p in "${packages[@]}"; do
  compgen -G "$dest/$p-*/" >/dev/null || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  if ! grep -rqs "^Types:.*deb-src\|^deb-src" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "adding a deb-src entry for bookworm (/etc/apt/sources.list.d/attnscope-src.sources)" >&2
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
      $sudo tee /etc/apt/sources.list.d/attnscope-src.sources >/dev/null
    $sudo apt-get update -qq
  fi
  mkdir -p "$dest"
  (cd "$dest" && apt-get source -qq "${missing[@]}" >&2) || {
    echo "error: apt-get source ${missing[*]} failed (is a deb-src entry for bookworm reachable?)" >&2
    exit 1
  }
fi
echo "$dest"
