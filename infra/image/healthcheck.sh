#!/bin/sh
# Docker's health check of the sandbox-mcp container (compose.yaml runs it as /app/bin/healthcheck).
#
# A restart policy restarts a container whose main process exits, but ignores "unhealthy": a
# server that is frozen (SIGSTOP, every scheduler thread pinned, a deadlock) would stay down for
# good. So after HEALTH_FAILURES probes in a row have failed, this script kills every process of
# the container's user (kill -1 spares the init and this script); the init then exits and the
# restart policy brings the container back. The reason goes to the container's log.
set -u
state=/tmp/.sandbox-mcp-health-failures
limit=${HEALTH_FAILURES:-3}
port=${MCP_ADDR##*:}

if curl -fsS --max-time "${HEALTH_TIMEOUT_SECONDS:-4}" -o /dev/null "http://127.0.0.1:${port:-8000}/healthz"; then
  rm -f "$state"
  exit 0
fi
failures=$(($(cat "$state" 2>/dev/null || echo 0) + 1))
echo "$failures" >"$state"
if [ "$failures" -ge "$limit" ]; then
  message="sandbox-mcp health check: $failures failed probes in a row; killing the server so that the restart policy restarts the container"
  echo "$message"
  echo "$message" >/proc/1/fd/2 2>/dev/null || true
  rm -f "$state"
  kill -KILL -1
fi
exit 1
