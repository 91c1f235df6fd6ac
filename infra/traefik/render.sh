#!/usr/bin/env bash
# Renders the sandbox-mcp Traefik dynamic configuration for one host name and prints it.
# Usage: [SANDBOX_PORT=18080] infra/traefik/render.sh <tailnet-host> [template]
#   e.g. infra/traefik/render.sh node.tailnet.ts.net > /etc/traefik/dynamic/sandbox-mcp.yml
set -euo pipefail

host=${1:-}
template=${2:-"$(dirname "$0")/dynamic/sandbox-mcp.yml.tmpl"}
port=${SANDBOX_PORT:-18080}

if [[ -z "$host" ]]; then
  echo "usage: $0 <tailnet-host> [template]   e.g. $0 node.tailnet.ts.net" >&2
  exit 2
fi
# A DNS name only: no scheme, port, path, spaces or backticks that could break the rule.
if ! [[ "$host" =~ ^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$ ]]; then
  echo "render: '$host' is not a host name (expected something like node.tailnet.ts.net)" >&2
  exit 2
fi
if ! [[ "$port" =~ ^[0-9]{1,5}$ ]] || ((port < 1 || port > 65535)); then
  echo "render: SANDBOX_PORT must be a port number, got '$port'" >&2
  exit 2
fi
[[ -r "$template" ]] || { echo "render: cannot read template $template" >&2; exit 2; }

# The placeholders are literals, replaced below.
# shellcheck disable=SC2016
host_placeholder='${TAILNET_HOST}' port_placeholder='${SANDBOX_PORT}'
while IFS= read -r line || [[ -n "$line" ]]; do
  line=${line//"$host_placeholder"/$host}
  printf '%s\n' "${line//"$port_placeholder"/$port}"
done < "$template"
