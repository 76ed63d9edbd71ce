#!/usr/bin/env bash
# zookeeper.sh start|stop|status|fetch — a real standalone Apache ZooKeeper on 127.0.0.1, from
# Maven Central jars: the coordination service of the ClickHouse shards of `up.sh --cluster`.
# Ready means it answers the `srvr` four-letter command. See README.md.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LIBS="$CACHE_DIR/zookeeper-libs"

fetch() {
  if [ "$(cat "$LIBS/.complete" 2>/dev/null || true)" = "$ZOOKEEPER_VERSION" ]; then return 0; fi
  mvn_fetch "$LIBS" zookeeper -P zookeeper dependency:copy-dependencies -DincludeScope=runtime
  echo "$ZOOKEEPER_VERSION" >"$LIBS/.complete"
}

# write_config RUNDIR PORT: one standalone server, client port on loopback only; no AdminServer
# (Jetty on 8080), and of the four-letter commands only srvr and ruok.
write_config() {
  cat >"$1/zoo.cfg" <<CFG
tickTime=2000
dataDir=$1/data
clientPort=$2
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=srvr,ruok
autopurge.purgeInterval=0
CFG
}

JAVA_OPTS=(-Xms64m -Xmx256m -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true
  -Dzookeeper.jmx.log4j.disable=true -Dorg.slf4j.simpleLogger.defaultLogLevel=info
  -Dorg.slf4j.simpleLogger.showDateTime=true)

# srvr PORT: the server's answer to `srvr` (version, mode, counts); fails when it gives none within 2 s.
srvr() {
  # shellcheck disable=SC2016  # $0 expands in the child shell
  timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" && printf srvr >&3 && cat <&3' "$1" 2>/dev/null
}

start_once() { # sets PORT, PID, RUNDIR; returns 2 when the port was taken meanwhile (retry)
  local log t_end
  RUNDIR="$INFRA_DIR/zookeeper-$(date +%Y%m%d-%H%M%S)-$$-$RANDOM"
  mkdir -p "$RUNDIR/data"
  PORT="$(free_port 0)" || exit 1 # 0: no port of ours to leave out
  write_config "$RUNDIR" "$PORT"
  log="$RUNDIR/zookeeper.log"
  PID="$(launch "$RUNDIR" "$log" java "${JAVA_OPTS[@]}" -cp "$LIBS/*" \
    org.apache.zookeeper.server.ZooKeeperServerMain "$RUNDIR/zoo.cfg")"
  t_end=$(($(date +%s) + START_TIMEOUT))
  while :; do
    if ! owned "$PID" "$RUNDIR"; then
      if grep -q 'Address already in use' "$log" 2>/dev/null; then return 2; fi
      fail "zookeeper: exited during startup (run dir $RUNDIR)" "$log"
    fi
    if srvr "$PORT" | grep -q '^Mode: standalone'; then return 0; fi
    if [ "$(date +%s)" -ge "$t_end" ]; then
      stop_owned "$PID" "$RUNDIR" 5 || true
      fail "zookeeper: no answer to srvr after ${START_TIMEOUT}s (run dir $RUNDIR)" "$log"
    fi
    sleep 0.2
  done
}

zookeeper_answers() { srvr "${STATE_ADDR##*:}" | grep -q '^Mode:'; }

start() {
  local t0
  t0=$(now_ms)
  need java
  start_service zookeeper zookeeper_answers zookeeper.log
  [ -n "$STARTED" ] || return 0
  write_state zookeeper "$PID" "$RUNDIR" "127.0.0.1:$PORT"
  echo "zookeeper $ZOOKEEPER_VERSION: ready at 127.0.0.1:$PORT (pid $PID) in $(secs_since "$t0")s"
}

status() {
  read_state zookeeper
  if [ -n "$STATE_PID" ] && owned "$STATE_PID" "$STATE_DIR"; then
    echo "zookeeper: running at $STATE_ADDR (pid $STATE_PID); $(srvr "${STATE_ADDR##*:}" | grep '^Mode:' || echo 'no answer to srvr')"
  else
    echo "zookeeper: not running"
    return 1
  fi
}

case "${1:-}" in
  start) with_lock "$INFRA_DIR/zookeeper.lock" start ;;
  stop) with_lock "$INFRA_DIR/zookeeper.lock" stop_service zookeeper 10 ;;
  status) status ;;
  fetch) with_lock "$CACHE_DIR/fetch.lock" fetch ;;
  *) echo "usage: $0 start|stop|status|fetch" >&2; exit 2 ;;
esac
