#!/usr/bin/env bash
# Idempotent set-up for the editor side: system packages for the editor tests (Chromium, ripgrep, Neovim,
# libkrb5-dev for code-server's native modules), the extension's npm packages, a pinned code-server plus
# playwright-core in a cache folder, and the packaged extension (vscode-client/dist/clperf.vsix).
# Seconds when everything is already there.
#
# Exit status 3 means "this machine cannot be set up" (not root and packages missing, no Node 20): the
# end-to-end tests skip on it with the message printed here. Any other failure is a real failure.
#
# Environment: CLPERF_EDITOR_CACHE (default .cache/editor in the repository) holds code-server.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${CLPERF_EDITOR_CACHE:-$root/.cache/editor}
code_server_version=4.100.3 # VS Code 1.100.3; the ripgrep cache name below belongs to this version
playwright_version=1.65.1
cannot() { echo "editor-setup: $*" >&2; exit 3; }
say() { echo "editor-setup: $*" >&2; }

# 1. System packages.
apt_packages=(chromium libkrb5-dev ripgrep neovim)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    say "installing ${missing[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    cannot "missing system packages: ${missing[*]} (as root: apt-get install -y ${missing[*]})"
  fi
fi

# 2. Node 20+ (code-server 4.100 and the extension's tools need it; Debian 12's nodejs is 18).
command -v node >/dev/null && command -v npm >/dev/null || cannot "Node.js 20+ and npm are needed (https://nodejs.org)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
((node_major >= 20)) || cannot "Node.js 20+ is needed, found $(node --version)"

# 3. The extension's packages, exactly as locked.
client=$root/vscode-client
lock_hash=$(sha256sum "$client/package-lock.json" | cut -c1-16)
if [[ ! -f $client/node_modules/.clperf-lock || $(cat "$client/node_modules/.clperf-lock") != "$lock_hash" ]]; then
  say "npm ci in vscode-client"
  (cd "$client" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$lock_hash" > "$client/node_modules/.clperf-lock"
fi

# 4. code-server + playwright-core, offline-safe: its @vscode/ripgrep postinstall downloads ripgrep from
# GitHub, so its cache is pre-seeded with Debian's rg. Newer npm blocks dependency install scripts by
# default; code-server's postinstall (and the nested npm install of VS Code's native modules) must run.
cs_dir=$cache/code-server
have=$(node -p "try{require('$cs_dir/node_modules/code-server/package.json').version}catch{''}" 2>/dev/null || true)
if [[ $have != "$code_server_version" || ! -d $cs_dir/node_modules/playwright-core ]]; then
  say "installing code-server $code_server_version and playwright-core $playwright_version into $cs_dir"
  mkdir -p "$cs_dir" "$cache/tmp/vscode-ripgrep-cache-1.15.11"
  tar czf "$cache/tmp/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" \
    -C "$(dirname "$(command -v rg)")" rg
  [[ -f $cs_dir/package.json ]] || echo '{"private": true, "name": "clperf-editor-tools"}' > "$cs_dir/package.json"
  (cd "$cs_dir" && TMPDIR=$cache/tmp npm_config_yes=true npm_config_dangerously_allow_all_scripts=true \
    npm install --unsafe-perm --no-audit --no-fund --loglevel=error \
    "code-server@$code_server_version" "playwright-core@$playwright_version")
fi
"$cs_dir/node_modules/.bin/code-server" --version >/dev/null || { say "code-server does not run"; exit 1; }

# 5. The packaged extension, rebuilt when a source file is newer than it.
vsix=$client/dist/clperf.vsix
if [[ ! -f $vsix ]] || [[ -n $(find "$client/src" "$client/syntaxes" "$client/package.json" \
    "$client/language-configuration.json" -newer "$vsix" -print -quit) ]]; then
  say "packaging the extension"
  (cd "$client" && npm run --silent package >/dev/null)
fi
echo "code-server: $cs_dir/node_modules/.bin/code-server"
echo "vsix: $vsix"
