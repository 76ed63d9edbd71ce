#!/usr/bin/env bash
# s3.sh start|stop|status — an S3-compatible server (s3proxy, from Maven Central) on 127.0.0.1.
# See README.md.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

JAR_DIR="$CACHE_DIR/s3proxy"
JAR="$JAR_DIR/s3proxy-$S3PROXY_VERSION-jar-with-dependencies.jar"
S3_ACCESS_KEY_ID="${S3_ACCESS_KEY_ID:-tally}"
S3_SECRET_ACCESS_KEY="${S3_SECRET_ACCESS_KEY:-tally-secret}"
S3_REGION="${S3_REGION:-us-east-1}"
S3_BUCKET="${S3_BUCKET:-tally-test}"
STORAGE="${TALLY_S3_STORAGE:-transient}" # transient (in memory) | filesystem (<run dir>/blobs)
EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

fetch() {
  if [ -f "$JAR" ] && [ "$(cat "$JAR_DIR/.complete" 2>/dev/null || true)" = "$S3PROXY_VERSION" ]; then return 0; fi
  mvn_fetch "$JAR_DIR" s3proxy dependency:copy \
    "-Dartifact=org.gaul:s3proxy:$S3PROXY_VERSION:jar:jar-with-dependencies"
  echo "$S3PROXY_VERSION" >"$JAR_DIR/.complete"
}

write_config() { # RUNDIR PORT
  {
    echo "s3proxy.endpoint=http://127.0.0.1:$2"
    echo "s3proxy.authorization=aws-v2-or-v4"
    echo "s3proxy.identity=$S3_ACCESS_KEY_ID"
    echo "s3proxy.credential=$S3_SECRET_ACCESS_KEY"
    echo "s3proxy.ignore-unknown-headers=true"
    case "$STORAGE" in
      transient) echo "jclouds.provider=transient" ;;
      filesystem)
        mkdir -p "$1/blobs"
        echo "jclouds.provider=filesystem"
        echo "jclouds.filesystem.basedir=$1/blobs"
        ;;
      *) fail "s3: TALLY_S3_STORAGE must be transient or filesystem, not '$STORAGE'" ;;
    esac
    # s3proxy <= 2.7 insists on these even for local providers; later versions ignore them.
    echo "jclouds.identity=unused"
    echo "jclouds.credential=unused"
  } >"$1/s3proxy.conf"
}

http_code() { curl -s -o /dev/null -m 2 -w '%{http_code}' "$@" 2>/dev/null || true; }

# Create S3_BUCKET with a SigV4-signed PUT (curl >= 7.75). 200 = created, 409 = already there.
create_bucket() {
  local endpoint=$1 code
  curl --help all 2>/dev/null | grep -q -- '--aws-sigv4' || return 0
  code="$(http_code -X PUT -H "x-amz-content-sha256: $EMPTY_SHA256" \
    --aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$S3_ACCESS_KEY_ID:$S3_SECRET_ACCESS_KEY" \
    "$endpoint/$S3_BUCKET")"
  case "$code" in 200 | 409) ;; *) fail "s3: could not create bucket $S3_BUCKET (HTTP $code)" "$RUNDIR/s3proxy.log" ;; esac
}

start_once() { # sets PORT, PID, RUNDIR; returns 2 when the port was taken meanwhile (retry)
  local log t_end code
  RUNDIR="$INFRA_DIR/s3-$(date +%Y%m%d-%H%M%S)-$$-$RANDOM"
  mkdir -p "$RUNDIR"
  # shellcheck disable=SC2119
  PORT="$(free_port)" || exit 1
  write_config "$RUNDIR" "$PORT"
  log="$RUNDIR/s3proxy.log"
  PID="$(launch "$RUNDIR" "$log" java -Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
    -jar "$JAR" --properties "$RUNDIR/s3proxy.conf")"
  t_end=$(($(date +%s) + START_TIMEOUT))
  while :; do
    if ! owned "$PID" "$RUNDIR"; then
      if grep -qiE 'Address already in use|Failed to bind' "$log" 2>/dev/null; then return 2; fi
      fail "s3: s3proxy exited during startup (run dir $RUNDIR)" "$log"
    fi
    code="$(http_code "http://127.0.0.1:$PORT/")"
    if [ -n "$code" ] && [ "$code" != 000 ]; then break; fi # any HTTP answer (403 unsigned) = up
    if [ "$(date +%s)" -ge "$t_end" ]; then
      stop_owned "$PID" "$RUNDIR" 5 || true
      fail "s3: no HTTP answer after ${START_TIMEOUT}s (run dir $RUNDIR)" "$log"
    fi
    sleep 0.1
  done
  create_bucket "http://127.0.0.1:$PORT"
}

s3_answers() { port_open "${STATE_ADDR##*:}"; }

start() {
  local t0
  t0=$(now_ms)
  need java
  need curl
  start_service s3 s3_answers s3proxy.log
  [ -n "$STARTED" ] || return 0
  write_state s3 "$PID" "$RUNDIR" "http://127.0.0.1:$PORT"
  echo "s3proxy $S3PROXY_VERSION: ready at http://127.0.0.1:$PORT bucket $S3_BUCKET (pid $PID) in $(secs_since "$t0")s"
}

status() {
  read_state s3
  if [ -n "$STATE_PID" ] && owned "$STATE_PID" "$STATE_DIR"; then
    echo "s3: running at $STATE_ADDR (pid $STATE_PID)"
  else
    echo "s3: not running"
    return 1
  fi
}

case "${1:-}" in
  start) with_lock "$INFRA_DIR/s3.lock" start ;;
  stop) with_lock "$INFRA_DIR/s3.lock" stop_service s3 10 ;;
  status) status ;;
  fetch) with_lock "$CACHE_DIR/fetch.lock" fetch ;;
  *) echo "usage: $0 start|stop|status|fetch" >&2; exit 2 ;;
esac
