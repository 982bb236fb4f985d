#!/usr/bin/env bash
# Builds platform-specific .vsix files into build/: the bundled extension (run `node client/build.mjs
# --production` first; npm run package does), the Python libraries for that platform, the examples.
#   package.sh [TARGET ...]   default: linux-x64; "all" for every target below
set -euo pipefail
cd "$(dirname "$0")/../.."
ALL=(linux-x64 linux-arm64 darwin-arm64 darwin-x64 win32-x64)
targets=("${@:-linux-x64}")
[[ ${targets[0]} == all ]] && targets=("${ALL[@]}")
[[ -f dist/extension.js ]] || { echo "package: dist/extension.js is missing: run node client/build.mjs --production" >&2; exit 2; }
if grep -q '"enabledApiProposals"' package.json; then
  echo "package: package.json has enabledApiProposals: such an extension cannot be published" >&2; exit 1
fi
mkdir -p build
for target in "${targets[@]}"; do
  bash client/scripts/bundle-python.sh "$target"
  npx --no-install vsce package --no-dependencies --target "$target" --out "build/firstfault-$target.vsix" >&2
  echo "build/firstfault-$target.vsix"
done
