#!/usr/bin/env bash
# Points Tailscale Funnel at Traefik's local HTTPS listener, so that Traefik stays the single
# entry point for the node's public name and routes /mcp-sandbox to the sandbox.
#
# Usage: infra/tailscale/funnel.sh [on|status|off]     (default: on)
#   on      check tailscale is installed, logged in and allowed to Funnel, then run
#           `tailscale funnel --bg --yes https+insecure://127.0.0.1:443`; does nothing when
#           Funnel already points there. The result is confirmed with `funnel status --json`,
#           because the CLI may print an enable URL and exit 0 having configured nothing.
#   status  show whether Funnel points at Traefik
#   off     turn Funnel off on port 443
# Environment: FUNNEL_TARGET (default https+insecure://127.0.0.1:443).
set -euo pipefail

target=${FUNNEL_TARGET:-https+insecure://127.0.0.1:443}
action=${1:-on}

fail() {
  echo "funnel: $*" >&2
  exit 1
}

require_tailscale() {
  command -v tailscale >/dev/null 2>&1 ||
    fail "tailscale is not installed (see https://tailscale.com/download)"
  local status
  status=$(tailscale status --json 2>/dev/null) ||
    fail "tailscaled is not running or not reachable (start it, then run: tailscale up)"
  grep -Eq '"BackendState": *"Running"' <<<"$status" ||
    fail "this node is not logged in to a tailnet (run: tailscale up)"
  grep -q 'tailscale.com/cap/https' <<<"$status" ||
    fail "HTTPS certificates are not enabled for this tailnet (admin console: DNS > Enable HTTPS)"
  grep -q 'tailscale.com/cap/funnel' <<<"$status" ||
    fail "this node may not use Funnel: add the funnel node attribute for it in the tailnet policy (nodeAttrs)"
}

# True when Funnel is on for port 443 and proxies to the target.
funnel_points_at_target() {
  local status
  status=$(tailscale funnel status --json 2>/dev/null) || return 1
  grep -Eq '"AllowFunnel": *\{[^}]*:443": *true' <<<"$(tr -d '\n' <<<"$status")" &&
    grep -Fq "\"Proxy\": \"$target\"" <<<"$(sed -E 's/"Proxy": *"/"Proxy": "/' <<<"$status")"
}

case "$action" in
  on)
    require_tailscale
    if funnel_points_at_target; then
      echo "funnel: already on: public HTTPS on :443 -> $target"
      exit 0
    fi
    tailscale funnel --bg --yes "$target"
    funnel_points_at_target ||
      fail "Funnel was not configured (if the CLI printed a URL above, open it to enable Funnel, then run this again)"
    echo "funnel: on: public HTTPS on :443 -> $target"
    ;;
  status)
    require_tailscale
    if funnel_points_at_target; then
      echo "funnel: on: public HTTPS on :443 -> $target"
    else
      echo "funnel: not pointing at $target"
      exit 3
    fi
    ;;
  off)
    command -v tailscale >/dev/null 2>&1 || fail "tailscale is not installed"
    tailscale funnel --https=443 off
    if funnel_points_at_target; then
      fail "Funnel is still on after 'tailscale funnel --https=443 off'"
    fi
    echo "funnel: off"
    ;;
  *)
    echo "usage: $0 [on|status|off]" >&2
    exit 2
    ;;
esac
