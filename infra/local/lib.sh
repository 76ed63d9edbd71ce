# shellcheck shell=bash disable=SC2034  # variables here are used by the scripts that source it
# Shared helpers for infra/local/*.sh. Sourced, never run.

INFRA_LOCAL="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$INFRA_LOCAL/../.." && pwd)"
INFRA_DIR="${TALLY_INFRA_DIR:-$REPO/.infra}"
# Jar cache: shared by every TALLY_INFRA_DIR, so temporary infra dirs stay warm.
CACHE_DIR="${TALLY_INFRA_CACHE:-$REPO/.infra/cache}"
POM="$INFRA_LOCAL/pom.xml"
START_TIMEOUT="${TALLY_INFRA_START_TIMEOUT:-90}"

pom_prop() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$POM" | head -n1; }
KAFKA_VERSION="$(pom_prop kafka.version)"
S3PROXY_VERSION="$(pom_prop s3proxy.version)"
ZOOKEEPER_VERSION="$(pom_prop zookeeper.version)"

now_ms() { date +%s%3N; }
secs_since() { local t0=$1 t1; t1=$(now_ms); printf '%d.%01d' $(((t1 - t0) / 1000)) $((((t1 - t0) % 1000) / 100)); }

# fail MESSAGE [LOGFILE]: print the message and the log's tail to stderr, exit 1.
fail() {
  echo "$1" >&2
  if [ -n "${2:-}" ] && [ -f "$2" ]; then
    echo "---- last 40 lines of $2 ----" >&2
    tail -n 40 "$2" >&2
    echo "----" >&2
  fi
  exit 1
}

need() { command -v "$1" >/dev/null 2>&1 || fail "infra: '$1' is required but not on PATH"; }

port_open() { (: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port [EXCLUDED_PORT...]: a port on 127.0.0.1 that nothing listens on, below Linux's
# ephemeral range (32768+) so outgoing connections are unlikely to be holding it.
free_port() {
  local p i listening
  listening="$(ss -Hltn 2>/dev/null | awk '{print $4}' | sed 's/.*://' || true)"
  for i in $(seq 1 200); do
    p=$((20000 + RANDOM % 12000))
    case " $* " in *" $p "*) continue ;; esac
    if printf '%s\n' "$listening" | grep -qx "$p"; then continue; fi
    port_open "$p" && continue
    echo "$p"
    return 0
  done
  fail "infra: no free port found"
}

# owned PID MARKER: true when PID is alive and its command line contains MARKER (our run dir),
# so a recycled pid is never mistaken for ours.
owned() {
  local pid=$1 marker=$2
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$marker"
}

# stop_owned PID MARKER GRACE_SECONDS: SIGTERM, wait, then SIGKILL. Only ever signals PID itself.
stop_owned() {
  local pid=$1 marker=$2 grace=$3 i
  owned "$pid" "$marker" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 $((grace * 10))); do
    owned "$pid" "$marker" || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do
    owned "$pid" "$marker" || return 0
    sleep 0.1
  done
  fail "infra: pid $pid did not exit"
}

# launch RUNDIR LOGFILE CMD...: start CMD detached (own session, so it survives the caller's
# process group), stdout+stderr to LOGFILE; the pid lands in RUNDIR/pid.
launch() {
  local rundir=$1 log=$2 i
  shift 2
  rm -f "$rundir/pid"
  # shellcheck disable=SC2016  # $$ and $@ expand in the child shell
  setsid bash -c 'echo $$ >"$0/pid.tmp" && mv "$0/pid.tmp" "$0/pid" && exec "$@"' "$rundir" "$@" \
    </dev/null >"$log" 2>&1 &
  for _ in $(seq 1 100); do
    [ -s "$rundir/pid" ] && { cat "$rundir/pid"; return 0; }
    sleep 0.05
  done
  fail "infra: process did not start" "$log"
}

# with_lock LOCKFILE CMD...: run CMD holding an exclusive lock on LOCKFILE.
with_lock() {
  local file=$1 lockfd
  shift
  mkdir -p "$(dirname "$file")"
  exec {lockfd}>"$file"
  flock -w 180 "$lockfd" || fail "infra: timed out waiting for lock $file"
  "$@"
  local rc=$?
  flock -u "$lockfd"
  exec {lockfd}>&-
  return $rc
}

# mvn_fetch DEST_DIR LOGNAME MVN_ARGS...: run Maven into a temp dir, then move it into place
# with a .complete marker, so a half-fetched cache is never reused.
mvn_fetch() {
  local dest=$1 name=$2 tmp log
  shift 2
  need mvn
  mkdir -p "$CACHE_DIR"
  log="$CACHE_DIR/mvn-$name.log"
  tmp="$dest.tmp.$$"
  rm -rf "$tmp"
  if ! mvn -B -q -f "$POM" "$@" -DoutputDirectory="$tmp" >"$log" 2>&1; then
    rm -rf "$tmp"
    fail "infra: Maven could not fetch $name jars" "$log"
  fi
  rm -rf "$dest"
  mv "$tmp" "$dest"
}

# read_state NAME: sets STATE_PID, STATE_DIR, STATE_ADDR from $INFRA_DIR/NAME.{pid,dir,address}.
read_state() {
  STATE_PID="$(cat "$INFRA_DIR/$1.pid" 2>/dev/null || true)"
  STATE_DIR="$(cat "$INFRA_DIR/$1.dir" 2>/dev/null || true)"
  STATE_ADDR="$(cat "$INFRA_DIR/$1.address" 2>/dev/null || true)"
}

write_state() {
  local name=$1 pid=$2 dir=$3 addr=$4
  printf '%s\n' "$dir" >"$INFRA_DIR/$name.dir"
  printf '%s\n' "$addr" >"$INFRA_DIR/$name.address"
  printf '%s\n' "$pid" >"$INFRA_DIR/$name.pid"
}

clear_state() { rm -f "$INFRA_DIR/$1.pid" "$INFRA_DIR/$1.dir" "$INFRA_DIR/$1.address"; }

# stop_service NAME GRACE: stop what NAME's state files record (and only that); safe to repeat.
stop_service() {
  local name=$1 grace=$2 t0
  t0=$(now_ms)
  read_state "$name"
  if [ -z "$STATE_PID" ] && [ -z "$STATE_DIR" ]; then
    echo "$name: not running"
    return 0
  fi
  if [ -n "$STATE_DIR" ] && owned "$STATE_PID" "$STATE_DIR"; then
    stop_owned "$STATE_PID" "$STATE_DIR" "$grace"
    echo "$name: stopped pid $STATE_PID in $(secs_since "$t0")s"
  else
    echo "$name: not running (stale state cleared)"
  fi
  # Only remove a run dir that is ours: inside INFRA_DIR and named NAME-*.
  case "$STATE_DIR" in "$INFRA_DIR/$name-"*) [ "${TALLY_INFRA_KEEP:-0}" = 1 ] || rm -rf "$STATE_DIR" ;; esac
  clear_state "$name"
}

# prune_rundirs NAME: remove NAME-* run dirs left by failed or interrupted starts (all but the
# recorded current one; a process still running from such a dir is ours and is stopped first).
# Called under NAME's lock, so no other start is in progress. Failed runs' logs stay until then.
prune_rundirs() {
  local name=$1 d pid
  read_state "$name"
  for d in "$INFRA_DIR/$name"-[0-9]*-*/; do
    [ -d "$d" ] || continue
    d="${d%/}"
    [ "$d" = "$STATE_DIR" ] && continue
    pid="$(cat "$d/pid" 2>/dev/null || true)"
    stop_owned "$pid" "$d" 5
    rm -rf "$d"
  done
}

# abort_start: EXIT trap while starting; stops the process we launched unless start completed.
abort_start() {
  if [ -z "${START_DONE:-}" ] && [ -n "${PID:-}" ] && [ -n "${RUNDIR:-}" ]; then
    stop_owned "$PID" "$RUNDIR" 3 || true
  fi
}

# start_service NAME ALIVE LOG [STALE_STOP_SECS]: what every script's start does around its own
# start_once (which sets PID and RUNDIR, and returns 2 when a port was taken between picking and
# binding). Keeps a service already running (its state owned and `ALIVE` true), stops what a crashed
# run left, fetches the jars when the script has a fetch, tries start_once up to three times, and
# sets STARTED=1 once one started; the caller then writes its state and says where it listens.
start_service() {
  local name=$1 alive=$2 log=$3 stale_stop_secs=${4:-5} rc
  STARTED=
  mkdir -p "$INFRA_DIR"
  read_state "$name"
  if [ -n "$STATE_PID" ] && owned "$STATE_PID" "$STATE_DIR" && "$alive"; then
    echo "$name: already running at $STATE_ADDR (pid $STATE_PID)"
    return 0
  fi
  stop_service "$name" "$stale_stop_secs" >/dev/null # stale state from a crashed run
  prune_rundirs "$name"
  if declare -F fetch >/dev/null; then with_lock "$CACHE_DIR/fetch.lock" fetch; fi
  trap abort_start EXIT
  for _ in 1 2 3; do
    rc=0
    start_once || rc=$?
    [ "$rc" = 2 ] || break
    rm -rf "$RUNDIR" # a port was taken between picking and binding: try new ports
  done
  [ "$rc" = 0 ] || fail "$name: could not start (run dir $RUNDIR)" "$RUNDIR/$log"
  START_DONE=1
  STARTED=1
}
