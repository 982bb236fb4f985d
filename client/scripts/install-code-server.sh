#!/usr/bin/env bash
# Installs code-server 4.100.3 (VS Code 1.100.3, the newest release whose npm package accepts Node 20)
# for the end-to-end tests, without network access beyond npm and Debian packages. Idempotent: a
# finished install is reused. Prints the install directory on its last line.
#
# A plain `npm install code-server` fails offline: its postinstall fetches ripgrep from GitHub, kerberos
# needs libkrb5-dev and argon2 downloads a prebuilt binary. So: install without scripts, then do what
# the postinstall would have done, from local parts.
set -euo pipefail
VERSION=4.100.3
DEST=${FIRSTFAULT_CODE_SERVER_DIR:-$HOME/.cache/firstfault/code-server-$VERSION}
PKG=$DEST/node_modules/code-server
RECIPE=2  # bump when the steps below change, so an older install is redone
log() { echo "install-code-server: $*" >&2; }

if [[ -f $DEST/.complete-$RECIPE ]]; then echo "$DEST"; exit 0; fi

# node-gyp downloads Node's headers unless told where they are; Node's own package ships them.
NODE_PREFIX=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
if [[ ! -f $NODE_PREFIX/include/node/node.h ]]; then
  log "Node's headers are not in $NODE_PREFIX/include/node: native modules cannot be built offline"; exit 1
fi
export npm_config_nodedir=$NODE_PREFIX

need_apt=()
for p in libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev ripgrep chromium; do
  dpkg -s "$p" >/dev/null 2>&1 || need_apt+=("$p")
done
if ((${#need_apt[@]})); then
  # Only what is missing, without recommended extras; --no-upgrade leaves installed packages as they are
  # (apt still adds the dependencies the new ones need).
  log "installing Debian packages: ${need_apt[*]}"
  SUDO=; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  APT=(apt-get install -y -q --no-install-recommends --no-upgrade "${need_apt[@]}")
  $SUDO "${APT[@]}" >&2 || { $SUDO apt-get update -q >&2 && $SUDO "${APT[@]}" >&2; }
fi

rm -rf "$DEST" && mkdir -p "$DEST"
cd "$DEST"
log "npm install code-server@$VERSION (no scripts)"
npm init -y >/dev/null
npm install --no-audit --no-fund --ignore-scripts "code-server@$VERSION" >&2

cd "$PKG/lib/vscode"
log "installing VS Code's runtime dependencies"
npm install --no-audit --no-fund --omit=dev --ignore-scripts >&2
mkdir -p node_modules/@vscode/ripgrep/bin
cp /usr/bin/rg node_modules/@vscode/ripgrep/bin/rg

log "building native modules"
NODE_GYP=$(dirname "$(command -v npm)")/../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js
while IFS= read -r gyp; do
  dir=$(dirname "$gyp")
  (cd "$dir" && node "$NODE_GYP" rebuild --nodedir="$NODE_PREFIX" >/dev/null 2>&1) || log "warning: could not build $(basename "$dir")"
done < <(find node_modules -name binding.gyp -not -path '*/test/*' -not -path '*/node-addon-api/*' | sort)

# What code-server's postinstall.sh links: the asar alias and the platform's remote CLI and browser helper.
ln -sfn node_modules node_modules.asar
ln -sfn code-linux.sh bin/remote-cli/code-server
ln -sfn browser-linux.sh bin/helpers/browser.sh

log "installing built-in extensions' dependencies"
(cd extensions && npm install --no-audit --no-fund --omit=dev >&2)

cd "$DEST"
log "building argon2"
npm rebuild argon2 --build-from-source >&2 || log "warning: argon2 not built (only --auth password needs it)"

node "$PKG/out/node/entry.js" --version >&2
[[ -f $PKG/lib/vscode/node_modules/node-pty/build/Release/pty.node ]] || { log "node-pty did not build: terminals would not work"; exit 1; }
touch "$DEST/.complete-$RECIPE"
echo "$DEST"
