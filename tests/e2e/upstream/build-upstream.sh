#!/usr/bin/env bash
# Builds the e2e suite's stand-in for the internet (EgressTest's "upstream"), the registry-free
# way the project's bases are built: a Debian root filesystem by mmdebstrap from this machine's
# apt sources, `docker import`ed. It serves HTTP on port 80 (busybox httpd, with git's smart-HTTP
# backend as a CGI) and HTTPS on 443 (socat with a certificate made at start): see upstream.sh.
# Usage: tests/e2e/upstream/build-upstream.sh IMAGE
# Does nothing when IMAGE exists with this recipe's digest in its label.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
image=${1:?usage: build-upstream.sh IMAGE}
recipe=$(cat "$here/build-upstream.sh" "$here/upstream.sh" | sha256sum | cut -c1-16)
if [[ "$(docker image inspect --format '{{index .Config.Labels "dev.sandboxmcp.upstream-recipe"}}' "$image" 2>/dev/null)" == "$recipe" ]]; then
  exit 0
fi
command -v mmdebstrap >/dev/null || { echo "build-upstream: mmdebstrap is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mirror=()
if [[ -n "${DEBIAN_MIRROR:-}" ]]; then
  mirror=("$DEBIAN_MIRROR")
fi
# shellcheck disable=SC2016
mmdebstrap --quiet --variant=essential --include=busybox,git,socat,openssl \
  --customize-hook='copy-in "'"$here"'/upstream.sh" /usr/local/bin' \
  --customize-hook='chmod 0755 "$1/usr/local/bin/upstream.sh"' \
  "${DEBIAN_SUITE:-bookworm}" "$work/rootfs.tar" "${mirror[@]}"
docker import --change 'ENTRYPOINT ["/usr/local/bin/upstream.sh"]' \
  --change "LABEL dev.sandboxmcp.upstream-recipe=$recipe" \
  --message "sandbox-mcp e2e upstream: busybox httpd, git http-backend, socat" "$work/rootfs.tar" "$image" >/dev/null
echo "build-upstream: done: $image"
