#!/bin/sh
# Docker's health check of the sandbox-mcp containers (compose.yaml runs it as
# /app/bin/healthcheck.sh server|runner; compose.egress.yaml as /opt/egress-proxy/healthcheck.sh
# proxy). Beyond shell builtins it uses only what each image has: the server's busybox
# (timeout, wget), the runner's coreutils date, the proxy's timeout and bash.
#
# A restart policy restarts a container whose main process exits, but ignores "unhealthy": a
# process that is frozen (SIGSTOP, every scheduler thread pinned, a deadlock) would stay down
# for good. So after HEALTH_FAILURES probes in a row have failed (the runner: once it has been
# failing for HEALTH_RUNNER_FAILING_SECONDS), this script kills every process of the container's
# user (kill -1 spares the init and this script); the init then exits and the restart policy
# brings the container back. The reason goes to the container's log.
set -u
role=${1:?usage: healthcheck.sh server|runner|proxy}
state=/tmp/.sandbox-mcp-health-failures
limit=${HEALTH_FAILURES:-3}
seconds=${HEALTH_TIMEOUT_SECONDS:-4}
# The runner is healthy while the server heard it so within this many seconds...
runner_stale=30
# ...and is killed once it has not been for this many (about three probes at compose's 10 s).
runner_failing_limit=${HEALTH_RUNNER_FAILING_SECONDS:-25}
status='' at=0 since=0

# The proxy's file of allowed lines (egress-proxy.sh wrote its path and size limit): past the
# limit, Squid is told to rotate it (SIGUSR1; it keeps the number of old files egress-proxy.sh
# set). Squid has no rotation by size, and this check runs every 10 s.
rotate_allowed_log() {
  read -r log limit </run/egress/allowed-log || return 0
  size=$(stat -c %s "$log" 2>/dev/null) || return 0
  [ "$size" -ge "$limit" ] || return 0
  for comm in /proc/[0-9]*/comm; do
    if read -r name 2>/dev/null <"$comm" && [ "$name" = squid ]; then
      pid=${comm#/proc/}
      kill -USR1 "${pid%/comm}" && echo "sandbox-mcp proxy health check: $log holds $size bytes; rotated"
    fi
  done
  return 0
}

probe() {
  case "$role" in
    server)
      # /healthz of the HTTP server, on the port it listens on (MCP_ADDR is host:port or :port).
      busybox timeout "$seconds" busybox wget -q -O /dev/null "http://127.0.0.1:${MCP_ADDR##*:}/healthz"
      ;;
    runner)
      # What the server last heard from the runner over the channel (it pings every few seconds
      # and writes "ok|failing|disconnected <written at> <so since>", epoch seconds, where
      # commands cannot write: the volume is read-only here). Starts no command, so the idle
      # sweep has nothing to do with it.
      read -r status at since <"${MCP_RUNNER_SOCKET%/*}/runner.state" || return 1
      [ "$status" = ok ] && [ $(($(date +%s) - at)) -le "$runner_stale" ]
      ;;
    proxy)
      # Squid answering on the sandbox's side (the address egress-proxy.sh wrote): a name that
      # is never listed gets its 403. The proxy leaves its own probes out of the audit.
      read -r address </run/egress/listen || return 1
      # shellcheck disable=SC2016
      timeout "$seconds" bash -c 'exec 3<>"/dev/tcp/$1/3128" && printf "HEAD http://health.invalid/ HTTP/1.0\r\n\r\n" >&3 &&
        read -r line <&3 && [[ "$line" == *" 403 "* ]]' probe "$address" && rotate_allowed_log
      ;;
    *)
      echo "healthcheck.sh: unknown role '$role'" >&2
      return 1
      ;;
  esac
}

# Seconds the runner has been failing, from facts no command can change (its /tmp is its
# commands' too: a count kept there could be reset by a command that then freezes the runner):
# the server's state, and when this container's init started (/proc/1/stat's 22nd field, in
# clock ticks since boot), so that a runner just started is not held to a failure before it.
runner_failing_for() {
  now=$(date +%s)
  if [ "$status" = ok ]; then
    from=$((at + runner_stale))
  else
    from=$since
  fi
  read -r uptime _ </proc/uptime
  read -r init </proc/1/stat
  # shellcheck disable=SC2086
  set -- ${init##*) }
  started=$((now - ${uptime%.*} + ${20} / $(getconf CLK_TCK)))
  [ "$from" -ge "$started" ] || from=$started
  echo $((now - from))
}

kill_container() {
  message="sandbox-mcp $role health check: $1; killing the $role so that the restart policy restarts its container"
  echo "$message"
  echo "$message" >/proc/1/fd/2 2>/dev/null || true
  kill -KILL -1
}

if probe; then
  [ "$role" = runner ] || echo 0 >"$state"
  exit 0
fi
if [ "$role" = runner ]; then
  failing=$(runner_failing_for)
  if [ "$failing" -ge "$runner_failing_limit" ]; then
    kill_container "the server has not heard it healthy for $failing s (runner.state: ${status:-missing} at $at since $since)"
  fi
  exit 1
fi
failures=0
[ -f "$state" ] && read -r failures <"$state"
failures=$((failures + 1))
echo "$failures" >"$state"
if [ "$failures" -ge "$limit" ]; then
  echo 0 >"$state"
  kill_container "$failures failed probes in a row"
fi
exit 1
