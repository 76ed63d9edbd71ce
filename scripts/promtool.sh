#!/usr/bin/env bash
# Prints the path of a promtool (Prometheus's metrics linter): one on PATH, else the one from
# Debian's prometheus package, unpacked (not installed) under .tools/promtool the first time.
set -euo pipefail
if command -v promtool >/dev/null 2>&1; then command -v promtool; exit 0; fi
dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.tools/promtool"
bin="$dir/usr/bin/promtool"
if [ ! -x "$bin" ]; then
  command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
    { echo "promtool: not on PATH, and no apt-get/dpkg-deb to fetch Debian's prometheus package" >&2; exit 1; }
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && timeout 300 apt-get download prometheus >/dev/null 2>&1) ||
    { echo "promtool: apt-get download prometheus failed" >&2; exit 1; }
  mkdir -p "$dir"
  dpkg-deb -x "$tmp"/prometheus_*.deb "$dir"
fi
echo "$bin"
