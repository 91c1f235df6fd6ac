#!/bin/sh
# Docker's health check of the sandbox-mcp containers (compose.yaml runs it as
# /app/bin/healthcheck.sh server|runner; compose.egress.yaml as /opt/egress-proxy/healthcheck.sh
# proxy). Beyond shell builtins it uses only what each image has: the server's busybox
# (timeout, wget), the runner's coreutils date, the proxy's timeout and bash.
#
# A restart policy restarts a container whose main process exits, but ignores "unhealthy": a
# process that is frozen (SIGSTOP, every scheduler thread pinned, a deadlock) would stay down
# for good. So after HEALTH_FAILURES probes in a row have failed, this script kills every process
# of the container's user (kill -1 spares the init and this script); the init then exits and
# the restart policy brings the container back. The reason goes to the container's log.
# Not the runner's: this check runs as its commands' user, which can stop it, kill it, or hold
# every pid so that it never starts, and count in its /tmp; the runner's init (runner-init, PID 1)
# restarts it instead, and this check only shows Docker what the server last heard.
set -u
role=${1:?usage: healthcheck.sh server|runner|proxy}
state=/tmp/.sandbox-mcp-health-failures
limit=${HEALTH_FAILURES:-3}
seconds=${HEALTH_TIMEOUT_SECONDS:-4}

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
      # and writes "ok|failing|disconnected <written at, epoch s> <held, s> <current for, s>"
      # where commands cannot write: the volume is read-only here). Starts no command, so the
      # idle sweep has nothing to do with it.
      read -r status at _ fresh <"${MCP_RUNNER_SOCKET%/*}/runner.state"
      case "$at:$fresh" in [0-9]*:[0-9]*) ;; *) return 1 ;; esac
      case "$at$fresh" in *[!0-9]*) return 1 ;; esac
      [ "$status" = ok ] && [ $(($(date +%s) - at)) -le "$fresh" ]
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

if probe; then
  [ "$role" = runner ] || echo 0 >"$state"
  exit 0
fi
[ "$role" = runner ] && exit 1
failures=0
[ -f "$state" ] && read -r failures <"$state"
failures=$((failures + 1))
echo "$failures" >"$state"
if [ "$failures" -ge "$limit" ]; then
  message="sandbox-mcp $role health check: $failures failed probes in a row; killing the $role so that the restart policy restarts its container"
  echo "$message"
  echo "$message" >/proc/1/fd/2 2>/dev/null || true
  echo 0 >"$state"
  kill -KILL -1
fi
exit 1
