#!/usr/bin/env bash
# up.sh — start local Kafka + S3 (see README.md) and write ${TALLY_INFRA_DIR:-<repo>/.infra}/env.
# Idempotent: services already running are kept. On failure both are stopped again.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

t0=$(now_ms)
mkdir -p "$INFRA_DIR"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# Fetch jars one after the other (one Maven at a time on ~/.m2), then start both at once.
"$INFRA_LOCAL/kafka.sh" fetch
"$INFRA_LOCAL/s3.sh" fetch
"$INFRA_LOCAL/kafka.sh" start >"$out/kafka" 2>"$out/kafka.err" &
kpid=$!
"$INFRA_LOCAL/s3.sh" start >"$out/s3" 2>"$out/s3.err" &
spid=$!
krc=0 src=0
wait "$kpid" || krc=$?
wait "$spid" || src=$?
if [ "$krc" != 0 ] || [ "$src" != 0 ]; then
  cat "$out/kafka.err" "$out/s3.err" >&2
  "$INFRA_LOCAL/down.sh" >/dev/null 2>&1 || true
  fail "up: failed (kafka rc=$krc, s3 rc=$src); stopped what was started"
fi

read_state kafka
KAFKA_BROKERS="$STATE_ADDR"
read_state s3
S3_ENDPOINT="$STATE_ADDR"
{
  echo "# Written by infra/local/up.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ); removed by down.sh."
  echo "export KAFKA_BROKERS=$KAFKA_BROKERS"
  echo "export S3_ENDPOINT=$S3_ENDPOINT"
  echo "export S3_BUCKET=${S3_BUCKET:-tally-test}"
  echo "export S3_REGION=${S3_REGION:-us-east-1}"
  echo "export S3_ACCESS_KEY_ID=${S3_ACCESS_KEY_ID:-tally}"
  echo "export S3_SECRET_ACCESS_KEY=${S3_SECRET_ACCESS_KEY:-tally-secret}"
} >"$INFRA_DIR/env.tmp"
mv "$INFRA_DIR/env.tmp" "$INFRA_DIR/env"
echo "infra up in $(secs_since "$t0")s: KAFKA_BROKERS=$KAFKA_BROKERS S3_ENDPOINT=$S3_ENDPOINT (source $INFRA_DIR/env)"
