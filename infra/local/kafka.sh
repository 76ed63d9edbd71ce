#!/usr/bin/env bash
# kafka.sh start|stop|status — a real single-node Apache Kafka (KRaft, combined broker+controller)
# on 127.0.0.1, from Maven Central jars; serve and serve-node run one broker (or one node of an
# N-node cluster) in the foreground for tests. See README.md.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LIBS="$CACHE_DIR/kafka-libs"

fetch() {
  if [ "$(cat "$LIBS/.complete" 2>/dev/null || true)" = "$KAFKA_VERSION" ]; then return 0; fi
  mvn_fetch "$LIBS" kafka dependency:copy-dependencies -DincludeScope=runtime
  echo "$KAFKA_VERSION" >"$LIBS/.complete"
}

cluster_id() { # 22 chars of base64url (a UUID's 16 bytes), not starting with '-'
  local id
  while :; do
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c1-22)"
    case "$id" in -*) ;; *) echo "$id"; return ;; esac
  done
}

# write_node_config RUNDIR NODE_ID PORT CPORT VOTERS REPLICAS MIN_ISR PARTITIONS: one node (broker and
# controller) of a KRaft cluster whose voters are VOTERS; every topic's partitions on REPLICAS nodes,
# and an acks=all write needs MIN_ISR of them in sync.
write_node_config() {
  cat >"$1/server.properties" <<PROPS
process.roles=broker,controller
node.id=$2
controller.quorum.voters=$5
listeners=PLAINTEXT://127.0.0.1:$3,CONTROLLER://127.0.0.1:$4
advertised.listeners=PLAINTEXT://127.0.0.1:$3
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$1/data
num.partitions=$8
default.replication.factor=$6
min.insync.replicas=$7
offsets.topic.replication.factor=$6
offsets.topic.num.partitions=$8
transaction.state.log.replication.factor=$6
transaction.state.log.min.isr=$7
transaction.state.log.num.partitions=$8
unclean.leader.election.enable=false
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
delete.topic.enable=true
PROPS
}

# write_config RUNDIR PORT CPORT: a single-node cluster (one replica, one partition by default).
write_config() {
  write_node_config "$1" 1 "$2" "$3" "1@127.0.0.1:$3" 1 1 1
}

JAVA_OPTS=(-Xms256m -Xmx512m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError
  -Djava.awt.headless=true "-Dlog4j.configuration=file:$INFRA_LOCAL/kafka-log4j.properties")

start_once() { # sets PORT, PID, RUNDIR; returns 2 when a port was taken meanwhile (retry)
  local cport log t_end
  RUNDIR="$INFRA_DIR/kafka-$(date +%Y%m%d-%H%M%S)-$$-$RANDOM"
  mkdir -p "$RUNDIR/data"
  PORT="$(free_port)" || exit 1
  cport="$(free_port "$PORT")" || exit 1
  write_config "$RUNDIR" "$PORT" "$cport"
  log="$RUNDIR/kafka.log"
  if ! java "${JAVA_OPTS[@]}" -cp "$LIBS/*" kafka.tools.StorageTool format \
    -t "$(cluster_id)" -c "$RUNDIR/server.properties" --ignore-formatted >"$RUNDIR/format.log" 2>&1; then
    fail "kafka: storage format failed (run dir $RUNDIR)" "$RUNDIR/format.log"
  fi
  PID="$(launch "$RUNDIR" "$log" java "${JAVA_OPTS[@]}" -cp "$LIBS/*" kafka.Kafka "$RUNDIR/server.properties")"
  t_end=$(($(date +%s) + START_TIMEOUT))
  while :; do
    if ! owned "$PID" "$RUNDIR"; then
      if grep -q 'Address already in use' "$log" 2>/dev/null; then return 2; fi
      fail "kafka: broker exited during startup (run dir $RUNDIR)" "$log"
    fi
    # Ready = the log says the server started AND the client port accepts connections.
    if grep -q 'Kafka Server started' "$log" && port_open "$PORT"; then return 0; fi
    if [ "$(date +%s)" -ge "$t_end" ]; then
      stop_owned "$PID" "$RUNDIR" 5 || true
      fail "kafka: not ready after ${START_TIMEOUT}s (run dir $RUNDIR)" "$log"
    fi
    sleep 0.2
  done
}

start() {
  local t0 rc
  t0=$(now_ms)
  need java
  mkdir -p "$INFRA_DIR"
  read_state kafka
  if [ -n "$STATE_PID" ] && owned "$STATE_PID" "$STATE_DIR" && port_open "${STATE_ADDR##*:}"; then
    echo "kafka: already running at $STATE_ADDR (pid $STATE_PID)"
    return 0
  fi
  stop_service kafka 5 >/dev/null # stale state from a crashed run
  prune_rundirs kafka
  with_lock "$CACHE_DIR/fetch.lock" fetch
  trap abort_start EXIT
  for _ in 1 2 3; do
    rc=0
    start_once || rc=$?
    [ "$rc" = 2 ] || break
    rm -rf "$RUNDIR" # a port was taken between picking and binding: try new ports
  done
  [ "$rc" = 0 ] || fail "kafka: could not start (run dir $RUNDIR)" "$RUNDIR/kafka.log"
  START_DONE=1
  write_state kafka "$PID" "$RUNDIR" "127.0.0.1:$PORT"
  echo "kafka $KAFKA_VERSION: ready at 127.0.0.1:$PORT (pid $PID) in $(secs_since "$t0")s"
}

# serve RUNDIR PORT CPORT: the broker in the foreground (logs to stdout) on fixed ports and data in
# RUNDIR, kept across runs: what a test needs to stop a broker and start the same one again.
serve() {
  need java
  with_lock "$CACHE_DIR/fetch.lock" fetch
  mkdir -p "$1/data"
  write_config "$1" "$2" "$3"
  if [ ! -f "$1/data/meta.properties" ]; then
    java "${JAVA_OPTS[@]}" -cp "$LIBS/*" kafka.tools.StorageTool format \
      -t "$(cluster_id)" -c "$1/server.properties" >"$1/format.log" 2>&1 ||
      fail "kafka: storage format failed (run dir $1)" "$1/format.log"
  fi
  exec java "${JAVA_OPTS[@]}" -cp "$LIBS/*" kafka.Kafka "$1/server.properties"
}

# serve-node RUNDIR NODE_ID PORT CPORT VOTERS CLUSTER_ID: one node of an N-node cluster in the
# foreground, data kept in RUNDIR. VOTERS is every node's id@127.0.0.1:CPORT, comma-separated; every
# node gets the same VOTERS and CLUSTER_ID (22 characters of base64url, e.g. from a UUID's 16 bytes).
serve_node() {
  need java
  with_lock "$CACHE_DIR/fetch.lock" fetch
  mkdir -p "$1/data"
  write_node_config "$1" "$2" "$3" "$4" "$5" 3 2 6
  if [ ! -f "$1/data/meta.properties" ]; then
    java "${JAVA_OPTS[@]}" -cp "$LIBS/*" kafka.tools.StorageTool format \
      -t "$6" -c "$1/server.properties" >"$1/format.log" 2>&1 ||
      fail "kafka: storage format of node $2 failed (run dir $1)" "$1/format.log"
  fi
  exec java "${JAVA_OPTS[@]}" -cp "$LIBS/*" kafka.Kafka "$1/server.properties"
}

status() {
  read_state kafka
  if [ -n "$STATE_PID" ] && owned "$STATE_PID" "$STATE_DIR"; then
    echo "kafka: running at $STATE_ADDR (pid $STATE_PID)"
  else
    echo "kafka: not running"
    return 1
  fi
}

case "${1:-}" in
  start) with_lock "$INFRA_DIR/kafka.lock" start ;;
  stop) with_lock "$INFRA_DIR/kafka.lock" stop_service kafka 20 ;;
  status) status ;;
  fetch) with_lock "$CACHE_DIR/fetch.lock" fetch ;;
  serve) [ $# = 4 ] || fail "usage: $0 serve RUNDIR PORT CONTROLLER_PORT"; serve "$2" "$3" "$4" ;;
  serve-node)
    [ $# = 7 ] || fail "usage: $0 serve-node RUNDIR NODE_ID PORT CONTROLLER_PORT VOTERS CLUSTER_ID"
    serve_node "$2" "$3" "$4" "$5" "$6" "$7"
    ;;
  *) echo "usage: $0 start|stop|status|fetch|serve|serve-node" >&2; exit 2 ;;
esac
