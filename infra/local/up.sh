#!/usr/bin/env bash
# up.sh [--cluster] — start local Kafka + S3 (see README.md) and write ${TALLY_INFRA_DIR:-<repo>/.infra}/env.
# --cluster: three Kafka brokers instead of one, two ClickHouse shards (the libchdb of `npm start`)
# and ZooKeeper besides S3; the env file then also points Tally at the shards.
# Idempotent: services already running are kept. On failure everything is stopped again.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cluster=0
for arg in "$@"; do
  case "$arg" in
    --cluster) cluster=1 ;;
    *) fail "usage: $0 [--cluster]" ;;
  esac
done

t0=$(now_ms)
mkdir -p "$INFRA_DIR"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# Fetch jars one after the other (one Maven at a time on ~/.m2), then start everything at once.
"$INFRA_LOCAL/kafka.sh" fetch
"$INFRA_LOCAL/s3.sh" fetch
if [ "$cluster" = 1 ]; then
  "$INFRA_LOCAL/zookeeper.sh" fetch
  services=(kafka:start-cluster s3:start zookeeper:start clickhouse:start)
else
  services=(kafka:start s3:start)
fi
pids=()
for s in "${services[@]}"; do
  "$INFRA_LOCAL/${s%%:*}.sh" "${s#*:}" >"$out/${s%%:*}" 2>"$out/${s%%:*}.err" &
  pids+=($!)
done
failed=""
for i in "${!services[@]}"; do
  rc=0
  wait "${pids[i]}" || rc=$?
  [ "$rc" = 0 ] || failed="$failed ${services[i]%%:*} rc=$rc"
done
if [ -n "$failed" ]; then
  for s in "${services[@]}"; do cat "$out/${s%%:*}.err" >&2; done
  "$INFRA_LOCAL/down.sh" >/dev/null 2>&1 || true
  fail "up: failed ($failed ); stopped what was started"
fi

if [ "$cluster" = 1 ]; then
  KAFKA_BROKERS=""
  for name in kafka1 kafka2 kafka3; do
    read_state "$name"
    KAFKA_BROKERS="$KAFKA_BROKERS${KAFKA_BROKERS:+,}$STATE_ADDR"
  done
  read_state zookeeper
  ZOOKEEPER="$STATE_ADDR"
else
  read_state kafka
  KAFKA_BROKERS="$STATE_ADDR"
fi
read_state s3
S3_ENDPOINT="$STATE_ADDR"
umask 077 # with --cluster it holds the ClickHouse users' passwords
{
  echo "# Written by infra/local/up.sh${1:+ $1} on $(date -u +%Y-%m-%dT%H:%M:%SZ); removed by down.sh."
  echo "export KAFKA_BROKERS=$KAFKA_BROKERS"
  echo "export S3_ENDPOINT=$S3_ENDPOINT"
  echo "export S3_BUCKET=${S3_BUCKET:-tally-test}"
  echo "export S3_REGION=${S3_REGION:-us-east-1}"
  echo "export S3_ACCESS_KEY_ID=${S3_ACCESS_KEY_ID:-tally}"
  echo "export S3_SECRET_ACCESS_KEY=${S3_SECRET_ACCESS_KEY:-tally-secret}"
  if [ "$cluster" = 1 ]; then
    "$INFRA_LOCAL/clickhouse.sh" env
    echo "# ZooKeeper $ZOOKEEPER_VERSION at $ZOOKEEPER (not used by the libchdb shards: see README.md)"
  fi
} >"$INFRA_DIR/env.tmp"
mv "$INFRA_DIR/env.tmp" "$INFRA_DIR/env"
if [ "$cluster" = 1 ]; then
  read_state clickhouse
  echo "infra up (cluster) in $(secs_since "$t0")s: KAFKA_BROKERS=$KAFKA_BROKERS ClickHouse shards $STATE_ADDR ZooKeeper $ZOOKEEPER S3_ENDPOINT=$S3_ENDPOINT (source $INFRA_DIR/env)"
else
  echo "infra up in $(secs_since "$t0")s: KAFKA_BROKERS=$KAFKA_BROKERS S3_ENDPOINT=$S3_ENDPOINT (source $INFRA_DIR/env)"
fi
