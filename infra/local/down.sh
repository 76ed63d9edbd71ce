#!/usr/bin/env bash
# down.sh — stop what up.sh (with or without --cluster, or kafka.sh/s3.sh/zookeeper.sh/clickhouse.sh
# start) started, and only that; safe to repeat.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

t0=$(now_ms)
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# All at once: the Kafka cluster's nodes must stop together (kafka.sh stop-cluster).
stops=(kafka:stop s3:stop kafka:stop-cluster zookeeper:stop clickhouse:stop)
pids=()
for s in "${stops[@]}"; do
  "$INFRA_LOCAL/${s%%:*}.sh" "${s#*:}" >"$out/${s/:/-}" 2>&1 &
  pids+=($!)
done
failed=""
for i in "${!stops[@]}"; do
  rc=0
  wait "${pids[i]}" || rc=$?
  [ "$rc" = 0 ] || failed="$failed ${stops[i]} rc=$rc"
done
rm -f "$INFRA_DIR/env"
said() { for s in "${stops[@]}"; do cat "$out/${s/:/-}"; done | tr ';' '\n'; }
if [ -n "$failed" ]; then
  said >&2
  fail "down: failed ($failed )"
fi
# What was stopped; services that were not running are left out unless none was.
stopped="$(said | grep -v ': not running$' | paste -sd ';' - | sed 's/;/; /g' || true)"
echo "infra down in $(secs_since "$t0")s: ${stopped:-nothing was running}"
