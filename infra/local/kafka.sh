#!/usr/bin/env bash
# kafka.sh start|stop|status — a real single-node Apache Kafka (KRaft, combined broker+controller)
# on 127.0.0.1, from Maven Central jars; start-cluster|stop-cluster|status-cluster the same for a
# cluster of three nodes (up.sh --cluster); serve and serve-node run one broker (or one node of an
# N-node cluster) in the foreground for tests. See README.md.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LIBS="$CACHE_DIR/kafka-libs"

fetch() {
  if [ "$(cat "$LIBS/.complete" 2>/dev/null || true)" = "$KAFKA_VERSION" ]; then return 0; fi
  mvn_fetch "$LIBS" kafka -P kafka dependency:copy-dependencies -DincludeScope=runtime
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

kafka_answers() { port_open "${STATE_ADDR##*:}"; }

start() {
  local t0
  t0=$(now_ms)
  need java
  start_service kafka kafka_answers kafka.log
  [ -n "$STARTED" ] || return 0
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

# The cluster of up.sh --cluster: CLUSTER_NODES nodes (broker + controller each, as serve-node
# runs them: 6 partitions, replication factor 3, min.insync.replicas 2), detached like start's
# broker, state files kafka1.*, kafka2.*, kafka3.* (run dirs kafkaN-…).
CLUSTER_NODES=3

cluster_names() { for n in $(seq 1 "$CLUSTER_NODES"); do echo "kafka$n"; done; }

cluster_running() {
  local name
  for name in $(cluster_names); do
    read_state "$name"
    [ -n "$STATE_PID" ] && owned "$STATE_PID" "$STATE_DIR" && port_open "${STATE_ADDR##*:}" || return 1
  done
}

start_cluster_once() { # sets PIDS, DIRS, PORTS; returns 2 when a port was taken meanwhile (retry)
  local n taken="" voters="" id cports=() t_end pid dir ready fpids=() rc=0
  PIDS=() DIRS=() PORTS=()
  id="$(cluster_id)"
  for n in $(seq 1 "$CLUSTER_NODES"); do
    # shellcheck disable=SC2086  # $taken is a list of ports
    PORTS+=("$(free_port $taken)") || exit 1
    taken="$taken ${PORTS[-1]}"
    # shellcheck disable=SC2086
    cports+=("$(free_port $taken)") || exit 1
    taken="$taken ${cports[-1]}"
    voters="$voters${voters:+,}$n@127.0.0.1:${cports[-1]}"
    DIRS+=("$INFRA_DIR/kafka$n-$(date +%Y%m%d-%H%M%S)-$$-$RANDOM")
  done
  for n in $(seq 1 "$CLUSTER_NODES"); do
    dir="${DIRS[n - 1]}"
    mkdir -p "$dir/data"
    write_node_config "$dir" "$n" "${PORTS[n - 1]}" "${cports[n - 1]}" "$voters" 3 2 6
    java "${JAVA_OPTS[@]}" -cp "$LIBS/*" kafka.tools.StorageTool format -t "$id" \
      -c "$dir/server.properties" >"$dir/format.log" 2>&1 &
    fpids+=($!)
  done
  for n in $(seq 1 "$CLUSTER_NODES"); do
    wait "${fpids[n - 1]}" || fail "kafka: storage format of node $n failed (run dir ${DIRS[n - 1]})" "${DIRS[n - 1]}/format.log"
  done
  # All at once: a node serves only once a majority of the controllers runs.
  for n in $(seq 1 "$CLUSTER_NODES"); do
    dir="${DIRS[n - 1]}"
    PIDS+=("$(launch "$dir" "$dir/kafka.log" java "${JAVA_OPTS[@]}" -cp "$LIBS/*" kafka.Kafka "$dir/server.properties")")
  done
  t_end=$(($(date +%s) + START_TIMEOUT))
  while :; do
    ready=0
    for n in $(seq 1 "$CLUSTER_NODES"); do
      pid="${PIDS[n - 1]}" dir="${DIRS[n - 1]}"
      if ! owned "$pid" "$dir"; then
        grep -q 'Address already in use' "$dir/kafka.log" 2>/dev/null && rc=2
        stop_cluster_pids
        [ "$rc" = 2 ] && return 2
        fail "kafka: node $n exited during startup (run dir $dir)" "$dir/kafka.log"
      fi
      if grep -q 'Kafka Server started' "$dir/kafka.log" && port_open "${PORTS[n - 1]}"; then ready=$((ready + 1)); fi
    done
    [ "$ready" = "$CLUSTER_NODES" ] && return 0
    if [ "$(date +%s)" -ge "$t_end" ]; then
      stop_cluster_pids
      for n in $(seq 1 "$CLUSTER_NODES"); do
        grep -q 'Kafka Server started' "${DIRS[n - 1]}/kafka.log" ||
          fail "kafka: node $n not ready after ${START_TIMEOUT}s (run dir ${DIRS[n - 1]})" "${DIRS[n - 1]}/kafka.log"
      done
      fail "kafka: cluster not ready after ${START_TIMEOUT}s (run dirs ${DIRS[*]})"
    fi
    sleep 0.2
  done
}

# stop_cluster_pids: stops the nodes start_cluster_once launched, all at once.
stop_cluster_pids() {
  local n spids=()
  for n in $(seq 1 "${#PIDS[@]}"); do
    stop_owned "${PIDS[n - 1]}" "${DIRS[n - 1]}" 10 &
    spids+=($!)
  done
  for n in "${spids[@]}"; do wait "$n" || true; done
}

abort_cluster_start() { [ -n "${START_DONE:-}" ] || stop_cluster_pids; }

start_cluster() {
  local t0 rc n name brokers=""
  t0=$(now_ms)
  need java
  mkdir -p "$INFRA_DIR"
  if cluster_running; then
    for name in $(cluster_names); do read_state "$name"; brokers="$brokers${brokers:+,}$STATE_ADDR"; done
    echo "kafka cluster: already running at $brokers"
    return 0
  fi
  stop_cluster >/dev/null # a node left from a crashed run: the cluster starts whole or not at all
  for name in $(cluster_names); do prune_rundirs "$name"; done
  with_lock "$CACHE_DIR/fetch.lock" fetch
  PIDS=() DIRS=()
  trap abort_cluster_start EXIT
  for _ in 1 2 3; do
    rc=0
    start_cluster_once || rc=$?
    [ "$rc" = 2 ] || break
    rm -rf "${DIRS[@]}" # a port was taken between picking and binding: try new ports
  done
  [ "$rc" = 0 ] || fail "kafka: cluster could not start (run dirs ${DIRS[*]})"
  START_DONE=1
  for n in $(seq 1 "$CLUSTER_NODES"); do
    write_state "kafka$n" "${PIDS[n - 1]}" "${DIRS[n - 1]}" "127.0.0.1:${PORTS[n - 1]}"
    brokers="$brokers${brokers:+,}127.0.0.1:${PORTS[n - 1]}"
  done
  echo "kafka $KAFKA_VERSION: $CLUSTER_NODES-node cluster ready at $brokers (pids ${PIDS[*]}) in $(secs_since "$t0")s"
}

# stop_cluster: every node at once (one stopped alone waits for a quorum the others then lack).
stop_cluster() {
  local name out pids=() rc=0
  out="$(mktemp -d)"
  for name in $(cluster_names); do
    stop_service "$name" 20 >"$out/$name" 2>&1 &
    pids+=($!)
  done
  for name in "${pids[@]}"; do wait "$name" || rc=1; done
  cat "$out"/kafka* | tr '\n' ';' | sed 's/;$/\n/'
  rm -rf "$out"
  return "$rc"
}

cluster_status() {
  local name rc=0
  for name in $(cluster_names); do
    read_state "$name"
    if [ -n "$STATE_PID" ] && owned "$STATE_PID" "$STATE_DIR"; then
      echo "$name: running at $STATE_ADDR (pid $STATE_PID)"
    else
      echo "$name: not running"
      rc=1
    fi
  done
  return "$rc"
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
  start-cluster) with_lock "$INFRA_DIR/kafka-cluster.lock" start_cluster ;;
  stop-cluster) with_lock "$INFRA_DIR/kafka-cluster.lock" stop_cluster ;;
  status-cluster) cluster_status ;;
  *) echo "usage: $0 start|stop|status|fetch|serve|serve-node|start-cluster|stop-cluster|status-cluster" >&2; exit 2 ;;
esac
