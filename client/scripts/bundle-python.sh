#!/usr/bin/env bash
# Puts the server and every Python library it needs into bundled/libs for one VS Code target, so the
# extension runs on any Python 3.11-3.13 without touching the user's environment. pyahocorasick, regex and hyperscan
# are compiled: their builds for each Python version land beside the others (the .so names carry the ABI tag).
# hyperscan has no wheel for Linux on ARM: that target goes without it (the prefilter's anchored automaton runs).
#   bundle-python.sh linux-x64|linux-arm64|darwin-arm64|darwin-x64|win32-x64
set -euo pipefail
TARGET=${1:?usage: bundle-python.sh TARGET}
PYTHON=${PYTHON:-python3}
VERSIONS=(3.11 3.12 3.13)
HYPERSCAN=1
case $TARGET in
  linux-x64) PLATFORMS=(manylinux2014_x86_64 manylinux_2_17_x86_64) ;;
  linux-arm64) PLATFORMS=(manylinux2014_aarch64 manylinux_2_17_aarch64); HYPERSCAN=0 ;;
  darwin-arm64) PLATFORMS=(macosx_11_0_arm64) ;;
  darwin-x64) PLATFORMS=(macosx_10_9_x86_64 macosx_10_13_x86_64) ;;
  win32-x64) PLATFORMS=(win_amd64) ;;
  *) echo "bundle-python: unknown target $TARGET" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/../.."
DEST=bundled/libs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
platform_args=(); for p in "${PLATFORMS[@]}"; do platform_args+=(--platform "$p"); done
pip() { PIP_ROOT_USER_ACTION=ignore "$PYTHON" -m pip --disable-pip-version-check -q "$@"; }

pip wheel --no-deps -w "$work/wheel" .
rm -rf bundled && mkdir -p "$DEST"
# The dependencies are named here rather than resolved from the wheel: pip evaluates their environment markers on
# this machine, not on the target's platform.
mapfile -t deps < <("$PYTHON" -c '
import sys, tomllib
for dep in tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]:
    name = dep.split(";")[0].strip()
    if sys.argv[1] == "1" or not name.startswith("hyperscan"):
        print(name)
' "$HYPERSCAN")
pip install --target "$DEST" --only-binary=:all: --implementation cp --python-version "${VERSIONS[0]}" \
  "${platform_args[@]}" --no-deps "$work"/wheel/firstfault-*.whl
pip install --target "$DEST" --only-binary=:all: --implementation cp --python-version "${VERSIONS[0]}" \
  "${platform_args[@]}" "${deps[@]}"
aho=$(ls -d "$DEST"/pyahocorasick-*.dist-info | sed -E 's/.*pyahocorasick-(.*)\.dist-info/\1/')
re_version=$(ls -d "$DEST"/regex-*.dist-info | sed -E 's/.*regex-(.*)\.dist-info/\1/')
hyperscan=()
if [[ $HYPERSCAN == 1 ]]; then
  hyperscan=("hyperscan==$(ls -d "$DEST"/hyperscan-*.dist-info | sed -E 's/.*hyperscan-(.*)\.dist-info/\1/')")
fi
for version in "${VERSIONS[@]:1}"; do
  pip install --target "$work/$version" --no-deps --only-binary=:all: --implementation cp --python-version "$version" \
    "${platform_args[@]}" "pyahocorasick==$aho" "regex==$re_version" "${hyperscan[@]}"
  cp "$work/$version"/ahocorasick*.so "$work/$version"/ahocorasick*.pyd "$DEST"/ 2>/dev/null || true
  cp "$work/$version"/regex/_regex*.so "$work/$version"/regex/_regex*.pyd "$DEST"/regex/ 2>/dev/null || true
  if [[ $HYPERSCAN == 1 ]]; then
    cp "$work/$version"/hyperscan/_hs_ext*.so "$work/$version"/hyperscan/_hs_ext*.pyd "$DEST"/hyperscan/ 2>/dev/null || true
    if [[ -d "$work/$version/hyperscan.libs" ]]; then cp "$work/$version"/hyperscan.libs/* "$DEST"/hyperscan.libs/; fi
  fi
done
find "$DEST" -name __pycache__ -prune -exec rm -rf {} +
rm -rf "$DEST/bin"
echo "bundle-python: $TARGET, Python ${VERSIONS[*]}: $(ls "$DEST" | grep -c dist-info) packages, $(ls "$DEST" | grep -ciE '^ahocorasick.*\.(so|pyd)$') ahocorasick builds, $(ls "$DEST/regex" | grep -ciE '^_regex.*\.(so|pyd)$') regex builds, $(ls "$DEST/hyperscan" 2>/dev/null | grep -ciE '^_hs_ext.*\.(so|pyd)$') hyperscan builds"
