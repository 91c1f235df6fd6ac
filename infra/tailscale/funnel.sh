#!/usr/bin/env bash
# Points Tailscale Funnel at Traefik's local HTTPS listener, so that Traefik stays the single
# entry point for the node's public name and routes /mcp-sandbox to the sandbox.
#
# Usage: infra/tailscale/funnel.sh [on|status|off]     (default: on)
#   on      check tailscale is installed, tailscaled answers, the node is logged in and may use
#           HTTPS and Funnel, then run `tailscale funnel --bg --yes <target>`; does nothing when
#           Funnel already points there. The result is confirmed with `funnel status --json`,
#           because the CLI may print an enable URL and exit 0 having configured nothing.
#   status  say whether Funnel points at Traefik (reads the daemon's configuration; no login needed)
#   off     turn Funnel off on port 443 (nothing to do when it is not on)
# Environment: FUNNEL_TARGET (default https+insecure://127.0.0.1:443); TAILSCALE_SOCKET, the
# socket of a tailscaled that does not use the default one (e.g. one in a container).
# Exit: 0 done (or already so); 1 it cannot be done, the message says why and what to do;
#       2 bad usage; 3 (status) Funnel does not point at the target.
# Everything the CLI says is read with jq from its --json output.
set -euo pipefail

target=${FUNNEL_TARGET:-https+insecure://127.0.0.1:443}
action=${1:-on}

fail() {
  echo "funnel: $*" >&2
  exit 1
}

ts() { tailscale ${TAILSCALE_SOCKET:+--socket="$TAILSCALE_SOCKET"} "$@"; }

require_cli() {
  command -v tailscale >/dev/null 2>&1 ||
    fail "tailscale is not installed (see https://tailscale.com/download)"
  command -v jq >/dev/null 2>&1 || fail "jq is not installed (make deps installs it)"
}

# The daemon's status as JSON; fails when it does not answer.
daemon_status() {
  local status
  if ! status=$(ts status --json 2>/dev/null) || ! jq -e 'type == "object"' >/dev/null 2>&1 <<<"$status"; then
    fail "tailscaled is not running or not reachable${TAILSCALE_SOCKET:+ at $TAILSCALE_SOCKET} (start it, then run: tailscale up)"
  fi
  printf '%s' "$status"
}

# A node capability, in the CapMap of current versions or the Capabilities list of older ones.
has_capability() {
  jq -e --arg cap "https://tailscale.com/cap/$1" \
    '((.Self.CapMap // {}) | has($cap)) or ((.Self.Capabilities // []) | index($cap) != null)' >/dev/null
}

require_funnel_allowed() {
  local status state
  status=$(daemon_status)
  state=$(jq -r '.BackendState // "unknown"' <<<"$status")
  [[ "$state" == Running ]] ||
    fail "this node is not logged in to a tailnet (tailscaled says $state; run: tailscale up)"
  has_capability https <<<"$status" ||
    fail "HTTPS certificates are not enabled for this tailnet (admin console: DNS > Enable HTTPS)"
  has_capability funnel <<<"$status" ||
    fail "this node may not use Funnel: add the funnel node attribute for it in the tailnet policy (nodeAttrs)"
}

# The daemon's Funnel configuration as JSON ({} when there is none).
funnel_config() {
  local config
  if ! config=$(ts funnel status --json 2>/dev/null) || ! jq -e 'type == "object"' >/dev/null 2>&1 <<<"$config"; then
    fail "tailscaled did not answer 'tailscale funnel status --json'${TAILSCALE_SOCKET:+ at $TAILSCALE_SOCKET}"
  fi
  printf '%s' "$config"
}

# True when Funnel is on for port 443 and proxies / there to the target.
points_at_target() {
  jq -e --arg target "$target" '
    ([(.AllowFunnel // {}) | to_entries[] | select((.key | endswith(":443")) and .value)] | length > 0)
    and ([(.Web // {}) | to_entries[] | select(.key | endswith(":443")) | .value.Handlers["/"].Proxy]
         | index($target) != null)' >/dev/null
}

funnel_on_443() {
  jq -e '[(.AllowFunnel // {}) | to_entries[] | select((.key | endswith(":443")) and .value)] | length > 0' >/dev/null
}

case "$action" in
  on)
    require_cli
    require_funnel_allowed
    config=$(funnel_config)
    if points_at_target <<<"$config"; then
      echo "funnel: already on: public HTTPS on :443 -> $target"
      exit 0
    fi
    ts funnel --bg --yes "$target"
    config=$(funnel_config)
    points_at_target <<<"$config" ||
      fail "Funnel was not configured (if the CLI printed a URL above, open it to enable Funnel, then run this again)"
    echo "funnel: on: public HTTPS on :443 -> $target"
    ;;
  status)
    require_cli
    daemon_status >/dev/null
    config=$(funnel_config)
    if points_at_target <<<"$config"; then
      echo "funnel: on: public HTTPS on :443 -> $target"
    else
      echo "funnel: not pointing at $target"
      exit 3
    fi
    ;;
  off)
    require_cli
    daemon_status >/dev/null
    config=$(funnel_config)
    if ! funnel_on_443 <<<"$config"; then
      echo "funnel: off (it was not on for :443)"
      exit 0
    fi
    ts funnel --https=443 off
    config=$(funnel_config)
    ! funnel_on_443 <<<"$config" || fail "Funnel is still on after 'tailscale funnel --https=443 off'"
    echo "funnel: off"
    ;;
  *)
    echo "usage: $0 [on|status|off]" >&2
    exit 2
    ;;
esac
