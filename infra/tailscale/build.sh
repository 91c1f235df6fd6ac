#!/usr/bin/env bash
# Builds the Tailscale CLI and daemon the e2e suite's Funnel tests run (tailscale, tailscaled),
# from the Go module proxy this machine's Go is configured with, at the pinned version below.
# Static binaries (CGO off), into a cache directory of their own; a second run finds them there
# and builds nothing. Prints the directory holding the two binaries on its last line.
#
#   infra/tailscale/build.sh [--print-dir]
#     --print-dir  print where the binaries are (or would be) and build nothing
# SANDBOX_MCP_CACHE: the cache (default ${XDG_CACHE_HOME:-~/.cache}/sandbox-mcp).
# Needs Go 1.21 or newer: one older than the 1.26 tailscale.com's go.mod asks for fetches that
# toolchain from the same module proxy (GOTOOLCHAIN=auto, Go's default). Exit: 0 built or already
# there; 1 the build failed; 2 bad usage or no Go.
set -euo pipefail

# The one place this version is named: tailscale.com v1.104 needs a newer Go than Debian's or
# this project's machines carry.
version=v1.102.5
cache=${SANDBOX_MCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-mcp}
out=$cache/tailscale-$version

case "${1:-}" in
  --print-dir) echo "$out"; exit 0 ;;
  "") ;;
  *) echo "usage: build.sh [--print-dir]" >&2; exit 2 ;;
esac

# A build outside tailscale's repository reports "1.102.5-ERR-BuildInfo" (no VCS stamp): the
# version is its first field.
if [[ -x "$out/tailscale" && -x "$out/tailscaled" ]] &&
  [[ "$("$out/tailscale" version 2>/dev/null | head -n1 | cut -d- -f1)" == "${version#v}" ]]; then
  echo "tailscale: $version already built in $out"
  echo "$out"
  exit 0
fi
command -v go >/dev/null || { echo "tailscale: no Go on PATH (install Go, then run this again)" >&2; exit 2; }

started=$(date +%s)
mkdir -p "$cache"
scratch=$(mktemp -d "$cache/tailscale-build.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# go install of a versioned path builds outside any module, from the configured module proxy.
if ! CGO_ENABLED=0 GOBIN="$scratch/bin" GOFLAGS=-trimpath \
  go install "tailscale.com/cmd/tailscale@$version" "tailscale.com/cmd/tailscaled@$version"; then
  echo "tailscale: go install of tailscale.com $version failed (see above; $(go version))" >&2
  exit 1
fi
rm -rf "$out"
mv "$scratch/bin" "$out"
echo "tailscale: built $version ($(go version | cut -d' ' -f3)) in $(($(date +%s) - started)) s into $out"
echo "$out"
