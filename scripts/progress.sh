# Progress reporting for scripts/test.sh and scripts/hardening.sh (sourced).
# The rule: every stage says when it starts and how long it took, and no
# command stays silent for more than HEARTBEAT_SECONDS (60): a command whose
# output goes to a log, or that may print nothing for minutes, runs under
# `heartbeat`, which prints a line (with the log's last line) meanwhile.

HEARTBEAT_SECONDS=${HEARTBEAT_SECONDS:-60}
# fd 9: the script's own output, where heartbeats go even when the command's
# output is redirected to a log (heartbeat ... CMD >LOG redirects both).
exec 9>&1

# stage_begin NAME: print "== NAME (started HH:MM:SS)" and start its clock.
stage_begin() {
  STAGE_NAME=$1
  STAGE_T0=$SECONDS
  echo "== $STAGE_NAME (started $(date +%H:%M:%S))"
}

# stage_end: print how long the current stage took.
stage_end() {
  echo "== $STAGE_NAME: done in $((SECONDS - STAGE_T0)) s"
  STAGE_NAME=
}

# heartbeat LABEL LOG CMD...: run CMD (a command or shell function); every
# HEARTBEAT_SECONDS while it runs print "... LABEL: N s" and, when LOG is a
# file (not -), the last line written to it. Returns CMD's exit status.
heartbeat() {
  local label=$1 log=$2
  shift 2
  "$@" &
  local pid=$! t0=$SECONDS next=$((SECONDS + HEARTBEAT_SECONDS))
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if [ $SECONDS -ge $next ] && kill -0 "$pid" 2>/dev/null; then
      next=$((SECONDS + HEARTBEAT_SECONDS))
      local last=""
      if [ "$log" != - ] && [ -s "$log" ]; then
        last=$(tail -n 1 "$log" | cut -c1-110)
        last=" | $last"
      fi
      echo "   ... $label: $((SECONDS - t0)) s$last" >&9
    fi
  done
  wait "$pid"
}
