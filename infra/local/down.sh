#!/usr/bin/env bash
# down.sh — stop what up.sh (or kafka.sh/s3.sh start) started, and only that; safe to repeat.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

t0=$(now_ms)
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
krc=0 src=0
"$INFRA_LOCAL/kafka.sh" stop >"$out/kafka" 2>&1 &
kpid=$!
"$INFRA_LOCAL/s3.sh" stop >"$out/s3" 2>&1 &
spid=$!
wait "$kpid" || krc=$?
wait "$spid" || src=$?
rm -f "$INFRA_DIR/env"
if [ "$krc" != 0 ] || [ "$src" != 0 ]; then
  cat "$out/kafka" "$out/s3" >&2
  fail "down: failed (kafka rc=$krc, s3 rc=$src)"
fi
echo "infra down in $(secs_since "$t0")s: $(tr '\n' ';' <"$out/kafka" | sed 's/;$//'); $(tr '\n' ';' <"$out/s3" | sed 's/;$//')"
