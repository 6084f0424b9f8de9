#!/usr/bin/env bash
# Installs the build into a temporary prefix and runs the installed attnscope from another folder:
# --version, compute, export, kv-cache (model presets from the assets), and scripted screenshots of a
# lesson (lessons from the assets) and of the About box under Xvfb. Then the tree is moved (the
# assets are found relative to the executable), $ATTNSCOPE_ASSETS overrides them, and a copy of the
# executable with no assets anywhere says so: exit 2 on the command line, the About box in the window.
#   test_install.sh BUILD_DIR SOURCE_DIR WORK_DIR COMPILED_ASSETS_DIR
# (the last: <CMAKE_INSTALL_PREFIX>/share/attnscope, the folder the build compiled in as step 3)
set -euo pipefail
build=$1 src=$2 work=$3 compiled_assets=$4
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAILED: $*" >&2; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

rm -rf "$work"
mkdir -p "$work/elsewhere" "$work/config"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
unset ATTNSCOPE_ASSETS
export XDG_CONFIG_HOME="$work/config" OMP_WAIT_POLICY=PASSIVE
cd "$work/elsewhere"  # neither the sources nor the build

# 1. The layout.
for f in bin/attnscope share/attnscope/sentences.json share/attnscope/models.json \
         share/applications/attnscope.desktop share/icons/hicolor/scalable/apps/attnscope.svg \
         share/metainfo/io.github.attnscope.attnscope.metainfo.xml share/man/man1/attnscope.1.gz \
         share/doc/attnscope/copyright share/doc/attnscope/changelog.gz; do
  check "installed $f" test -s "$prefix/$f"
done
for lesson in "$src"/assets/lessons/*.json; do
  check "installed lesson $(basename "$lesson")" cmp -s "$lesson" "$prefix/share/attnscope/lessons/$(basename "$lesson")"
done
for f in "$src"/assets/models/induction/*; do
  check "installed model file $(basename "$f")" cmp -s "$f" "$prefix/share/attnscope/models/induction/$(basename "$f")"
done
for n in 16 24 32 48 64 128 256 512; do
  png="$prefix/share/icons/hicolor/${n}x${n}/apps/attnscope.png"
  check "icon ${n}x${n} is a ${n} x ${n} PNG" grep -q "PNG image data, $n x $n," <(file "$png")
done
check "man page names the program" grep -q '^attnscope \\- see attention' <(gzip -dc "$prefix/share/man/man1/attnscope.1.gz")
check "man page has the flags of --help" grep -q 'version' <(gzip -dc "$prefix/share/man/man1/attnscope.1.gz")
check "man page has each command's --help" grep -q 'attnscope train' <(gzip -dc "$prefix/share/man/man1/attnscope.1.gz")
# Nothing in the program points into the source tree or the build folder.
check "the executable holds no path of the source tree" bash -c "! grep -aqF '$src/' '$prefix/bin/attnscope'"
check "the executable holds no path of the build folder" bash -c "! grep -aqF '$(cd "$build" && pwd)/' '$prefix/bin/attnscope'"

# 2. The installed program, run from another folder.
app="$prefix/bin/attnscope"
version=$("$app" --version)
check "--version: '$version' is the build's" test "$version" = "$("$build/app/attnscope" --version)"
check "--version names a git revision" grep -qE '^attnscope [0-9.]+ \(git .+\)$' <<<"$version"
check "compute writes its tensors" "$app" compute --text "The cat sat on the mat." --kind gqa --heads 4 --groups 2 --out out
check "compute: probs.npy and trace.json" test -s out/probs.npy -a -s out/trace.json
check "export writes a PNG" "$app" export --what heads --format png --text "我喜欢打篮球" --out heads.png
check "export: heads.png is a PNG" grep -q "PNG image data" <(file heads.png)
check "kv-cache reads the model presets" bash -c "'$app' kv-cache --model llama-2-7b --seq 4096 >kv.json"
check "kv-cache: an answer for llama-2-7b" grep -q '"mha"' kv.json
check "compute --checkpoint opens the shipped induction model" \
  "$app" compute --checkpoint "$prefix/share/attnscope/models/induction" --ids 1,2,3,4,1,2,3 --out model_out

# 3. The window under Xvfb: a lesson (from the assets) and the About box.
window() {  # window NAME ARGS…: a scripted screenshot NAME.png, layout NAME.json, stderr NAME.err
  local name=$1; shift
  xvfb-run -a -s "-screen 0 1920x1080x24" "$app" "$@" --size 1280x720 --screenshot "$name.png" \
    --layout-json "$name.json" 2>"$name.err"
}
check "window: lesson 4 opens" window lesson --lesson 4 --step 2
check "window: lesson 4 printed no error" test ! -s lesson.err
check "window: lesson screenshot" grep -q "PNG image data, 1280 x 720" <(file lesson.png)
check "window: About box opens" window about --show-about
check "window: the About box shows the version" grep -q '"about.version"' about.json
check "window: the About box shows the assets folder" grep -q '"about.assets_folder"' about.json
check "window: no assets error" bash -c "! grep -q '\"about.assets_missing\"' about.json"

# 4. Moved elsewhere, the tree still finds its assets (relative to the executable).
mv "$prefix" "$work/moved"
check "moved tree: kv-cache still finds the presets" "$work/moved/bin/attnscope" kv-cache --model gpt2-small --seq 1024
# $ATTNSCOPE_ASSETS comes first.
mkdir -p "$work/mine"
cp "$work/moved/share/attnscope/sentences.json" "$work/mine/"
printf '%s' '{"models": [{"name": "tiny", "label": "Tiny", "layers": 2, "heads": 4, "kv_heads": 2, "head_dim": 8, "context": 16, "source": "a test"}]}' \
  >"$work/mine/models.json"
check "ATTNSCOPE_ASSETS overrides the installed presets" env ATTNSCOPE_ASSETS="$work/mine" "$work/moved/bin/attnscope" kv-cache --model tiny --seq 16
set +e
ATTNSCOPE_ASSETS="$work/nowhere" "$work/moved/bin/attnscope" kv-cache --model tiny --seq 16 >/dev/null 2>bad_env.err
code=$?
set -e
check "a wrong ATTNSCOPE_ASSETS: exit 2" test "$code" = 2
check "a wrong ATTNSCOPE_ASSETS: says so" grep -q "ATTNSCOPE_ASSETS is '$work/nowhere', which is not an attnscope assets folder" bad_env.err

# 5. The executable alone: no assets beside it. The compiled-in prefix would still serve it when
#    attnscope is installed on this machine, so that case is only checked when it is not.
mkdir -p "$work/lonely/bin"
cp "$work/moved/bin/attnscope" "$work/lonely/bin/"
if [[ -f "$compiled_assets/sentences.json" ]]; then
  echo "note: $compiled_assets holds assets on this machine; the missing-assets checks are skipped"
else
  set +e
  "$work/lonely/bin/attnscope" kv-cache --model gpt2-small --seq 16 >/dev/null 2>lonely.err
  code=$?
  set -e
  check "no assets: the command line exits 2" test "$code" = 2
  check "no assets: one error line naming the folders tried" \
    grep -q "^error: cannot find attnscope's assets folder (looked for sentences.json in: $work/lonely/share/attnscope, $compiled_assets)" lonely.err
  check "no assets: the compute needs none and still runs" "$work/lonely/bin/attnscope" compute --text "A cat." --out lonely_out
  app="$work/lonely/bin/attnscope"
  check "no assets: the window still opens" window lonely
  check "no assets: the window opens the About box with the error" grep -q '"about.assets_missing"' lonely.json
  check "no assets: the window says so on stderr too" grep -q "^error: cannot find attnscope's assets folder" lonely.err
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
