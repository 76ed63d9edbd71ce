#!/usr/bin/env bash
# clickhouse.sh start|stop|status — two ClickHouse shards on 127.0.0.1 from the libchdb that
# `npm start` embeds, each a server on HTTP and the native TCP protocol, with remote_servers (an
# interserver secret), macros and the Distributed send pool: the cluster of `up.sh --cluster`.
# The servers are started by clickhouse-shards.ts (services/shared/clickhouse-server). See README.md.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CLUSTER=tally_cluster
SHARDS=2

start_once() { # sets PID, RUNDIR; returns 2 when a port was taken meanwhile (retry)
  local log t_end taken="" pairs=() http tcp
  RUNDIR="$INFRA_DIR/clickhouse-$(date +%Y%m%d-%H%M%S)-$$-$RANDOM"
  mkdir -p "$RUNDIR"
  for _ in $(seq 1 "$SHARDS"); do
    # shellcheck disable=SC2086  # $taken is a list of ports
    http="$(free_port $taken)" || exit 1
    taken="$taken $http"
    # shellcheck disable=SC2086
    tcp="$(free_port $taken)" || exit 1
    taken="$taken $tcp"
    pairs+=("$http:$tcp")
  done
  log="$RUNDIR/clickhouse.log"
  PID="$(launch "$RUNDIR" "$log" "$REPO/scripts/with-node24" node --disable-warning=ExperimentalWarning \
    "$INFRA_LOCAL/clickhouse-shards.ts" "$RUNDIR" "$CLUSTER" "${pairs[@]}")"
  t_end=$(($(date +%s) + START_TIMEOUT + 15))
  while :; do
    if [ -s "$RUNDIR/env" ] && owned "$PID" "$RUNDIR"; then return 0; fi
    if ! owned "$PID" "$RUNDIR"; then
      if grep -q 'Address already in use\|EADDRINUSE' "$log" 2>/dev/null; then return 2; fi
      fail "clickhouse: shards exited during startup (run dir $RUNDIR)" "$log"
    fi
    if [ "$(date +%s)" -ge "$t_end" ]; then
      stop_owned "$PID" "$RUNDIR" 20 || true
      fail "clickhouse: shards not ready after ${START_TIMEOUT}s (run dir $RUNDIR)" "$log"
    fi
    sleep 0.2
  done
}

shards_ready() { [ -s "$STATE_DIR/env" ]; }

start() {
  local t0
  t0=$(now_ms)
  start_service clickhouse shards_ready clickhouse.log 20
  [ -n "$STARTED" ] || return 0
  # The address: every shard's HTTP endpoint, without the passwords (those are in RUNDIR/env).
  write_state clickhouse "$PID" "$RUNDIR" "$(cat "$RUNDIR/endpoints")"
  echo "clickhouse: $SHARDS shards of $CLUSTER ready at $(cat "$RUNDIR/endpoints") (pid $PID) in $(secs_since "$t0")s"
}

status() {
  read_state clickhouse
  if [ -n "$STATE_PID" ] && owned "$STATE_PID" "$STATE_DIR"; then
    echo "clickhouse: running at $STATE_ADDR (pid $STATE_PID)"
  else
    echo "clickhouse: not running"
    return 1
  fi
}

# env: Tally's variables for this cluster (CLICKHOUSE_URL, …), for up.sh's env file.
print_env() {
  read_state clickhouse
  { [ -n "$STATE_DIR" ] && owned "$STATE_PID" "$STATE_DIR" && [ -s "$STATE_DIR/env" ]; } || fail "clickhouse: not running"
  cat "$STATE_DIR/env"
}

case "${1:-}" in
  start) with_lock "$INFRA_DIR/clickhouse.lock" start ;;
  stop) with_lock "$INFRA_DIR/clickhouse.lock" stop_service clickhouse 40 ;;
  status) status ;;
  env) print_env ;;
  *) echo "usage: $0 start|stop|status|env" >&2; exit 2 ;;
esac
